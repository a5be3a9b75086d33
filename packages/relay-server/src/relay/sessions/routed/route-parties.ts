import { type JsonRpcNotification, type JsonRpcRequest, NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import type { Connection } from '@wmp/session';
import { initiatorOf, type Party, peerRelayOf, type RelayRoute, responderOf } from './route-record.js';

/** Whether `connection` authenticated `identity` (on any session it carries). */
export function authenticatedAs(connection: Connection, identity: string): boolean {
  if (connection.adopted === identity) return true;
  for (const binding of connection.sessions.values()) if (binding.identity === identity) return true;
  return false;
}

function claimedSender(message: JsonRpcRequest | JsonRpcNotification): unknown {
  return (message.params as { wmp?: { sender?: unknown } } | undefined)?.wmp?.sender;
}

/**
 * The one party of `parties` that sent a frame: a `wmp.sender` must name one the frame may speak
 * for, else (no sender) exactly one must be; -31002 for anyone else, and nothing passes.
 */
function senderAmong(message: JsonRpcRequest | JsonRpcNotification, speaksFor: readonly Party[]): Party {
  const claimed = claimedSender(message);
  if (claimed !== undefined) {
    const party = speaksFor.find((p) => p.id === claimed);
    if (party !== undefined) return party;
    throw new NotAuthorizedError({ reason: 'sender is not a party of this session' });
  }
  if (speaksFor.length === 1) return speaksFor[0]!;
  throw new NotAuthorizedError({ reason: speaksFor.length === 0 ? 'not a party of this session' : 'sender required' });
}

/**
 * The party that sent a frame on a connection (sender binding, docs/architecture.md "Sessions
 * through the relay"): a connection authenticated as the party, or, for a party at another relay,
 * as the relay that speaks for it on this route (its link to us). That relay speaks for that party
 * only: never for the other one.
 */
export function partyOnConnection(
  message: JsonRpcRequest | JsonRpcNotification,
  route: RelayRoute,
  connection: Connection,
): Party {
  const speaks = (p: Party) =>
    authenticatedAs(connection, p.id) || (p.via !== undefined && authenticatedAs(connection, peerRelayOf(p.via)));
  return senderAmong(message, [initiatorOf(route), responderOf(route)].filter(speaks));
}

/** The party that sent a frame over our link to the peer at `origin`: the one that peer speaks for. */
export function partyOverLink(message: JsonRpcRequest | JsonRpcNotification, route: RelayRoute, origin: string): Party {
  const speaks = (p: Party) => p.via !== undefined && 'link' in p.via && p.via.link === origin;
  return senderAmong(message, [initiatorOf(route), responderOf(route)].filter(speaks));
}
