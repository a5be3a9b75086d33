import type { JsonRpcNotification } from '@wmp/jsonrpc-envelope';
import type { Federation } from '../../federation/federation.js';
import { OFFLINE, type PartyLinks } from './party-links.js';
import type { Party } from './route-record.js';

/**
 * How long past its own offer timeout this relay waits for a peer's answer to an offered create:
 * the peer gives up on its party first and says so, and this relay then hosts the session (it
 * never hosts one the party answered in time).
 */
export const PEER_OFFER_MARGIN_MS = 2_000;

/** What reaching parties at peer relays takes of federation. */
export type PeerRelays = Pick<Federation, 'remoteHomeOf' | 'readyLink' | 'upLink'>;

/** Our link to the peer relay a party is reached through, when it is up. */
function linkOf(federation: PeerRelays, party: Party) {
  return party.via !== undefined && 'link' in party.via ? federation.upLink(party.via.link) : undefined;
}

/**
 * Parties at home at a peer relay (docs/architecture.md, "Sessions through the relay"): an offer
 * goes over our link to the identity's home relay (resolved as for a deliver, the lookup charged to
 * the initiator), which offers it to its own connections; the frames of the route then go over
 * that link. Tried after this node and the cluster: a party connected here is reached here.
 */
export function peerPartyLinks(federation: PeerRelays): PartyLinks {
  return {
    async offer(identity, params, timeoutMs) {
      const initiator = (params.wmp as { sender?: unknown } | undefined)?.sender;
      const origin = await federation
        .remoteHomeOf(identity, typeof initiator === 'string' ? initiator : undefined)
        .catch(() => undefined);
      if (origin === undefined || origin === '') return undefined;
      const link = await federation.readyLink(origin, timeoutMs);
      const relayId = link?.relayId;
      if (link === undefined || relayId === undefined) return undefined;
      const answer = await link.pass('wmp.session.create', params, timeoutMs + PEER_OFFER_MARGIN_MS);
      return { via: { link: origin, relayId }, answer };
    },
    async request(party, method, params, timeoutMs) {
      const link = linkOf(federation, party);
      if (link === undefined) return OFFLINE;
      return link.pass(method, params, timeoutMs);
    },
    async notify(party, message: JsonRpcNotification) {
      return (await linkOf(federation, party)?.send(message)) ?? false;
    },
  };
}
