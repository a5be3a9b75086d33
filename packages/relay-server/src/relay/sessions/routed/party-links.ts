import type { JsonRpcNotification } from '@wmp/jsonrpc-envelope';
import type { Connection, ForwardedAnswer } from '@wmp/session';
import type { Party, PeerPath } from './route-record.js';

/** What a party gave back for a request passed to it, or that it could not be reached. */
export type PartyAnswer = ForwardedAnswer | { readonly offline: true };

export const OFFLINE: PartyAnswer = Object.freeze({ offline: true });

/** A connection of a party that takes frames now, and the hop session it is reached on. */
export interface PartyConnection {
  readonly connection: Connection;
  readonly hop: string;
}

/** Who answered an offered create: on a hop session here, or at a peer relay (reached over `via`). */
export interface PartyOffer {
  readonly hop?: string;
  readonly via?: PeerPath;
  readonly answer: ForwardedAnswer;
}

/**
 * How the relay reaches one party of a routed session, wherever it is connected: on this node,
 * on another node of the cluster, or at a peer relay. Each answers for what it can reach and
 * says `offline` for the rest.
 */
export interface PartyLinks {
  /** Offers a create to the identity's newest live registered connection; undefined: it has none. */
  offer(identity: string, params: Record<string, unknown>, timeoutMs: number): Promise<PartyOffer | undefined>;
  /** Passes a request on (the party's answer comes back as it gave it). */
  request(party: Party, method: string, params: unknown, timeoutMs: number): Promise<PartyAnswer>;
  /** Passes a notification on; false when the party could not be reached. */
  notify(party: Party, message: JsonRpcNotification): Promise<boolean>;
}

/** What the relay knows of the connections on this node. */
export interface LocalConnections {
  /** Connections bound to a session here (the session engine's bindings). */
  connectionsOf(sessionId: string): readonly Connection[];
  /** The identity's newest live registered connection here, with its hop session. */
  newestRegistered(identity: string): PartyConnection | undefined;
}

function takesFrames(connection: Connection): boolean {
  return !connection.peer.closed && connection.peer.transport.reachable !== false;
}

/**
 * The party's connection here: the one bound to its hop session (the device that holds the
 * session), else its newest registered one (that device came back on a new hop session). A party
 * at a peer relay that offered the create here is reached on that relay's link to us; one at a
 * peer we offered it to, only over our link there (not here).
 */
export function localConnectionOf(local: LocalConnections, party: Party): PartyConnection | undefined {
  if (party.via !== undefined) {
    if (!('peer' in party.via)) return undefined;
    const link = local.newestRegistered(party.via.peer);
    return link !== undefined && takesFrames(link.connection) ? link : undefined;
  }
  if (party.hop !== undefined) {
    for (const connection of local.connectionsOf(party.hop)) {
      if (connection.sessions.get(party.hop)?.identity === party.id && takesFrames(connection)) {
        return { connection, hop: party.hop };
      }
    }
  }
  const newest = local.newestRegistered(party.id);
  return newest !== undefined && takesFrames(newest.connection) ? newest : undefined;
}

/** Parties connected to this node. */
export function localPartyLinks(local: LocalConnections): PartyLinks {
  return {
    async offer(identity, params, timeoutMs) {
      const target = local.newestRegistered(identity);
      if (target === undefined || !takesFrames(target.connection)) return undefined;
      const answer = await target.connection.peer.forward('wmp.session.create', params, { timeoutMs });
      return { hop: target.hop, answer };
    },
    async request(party, method, params, timeoutMs) {
      const target = localConnectionOf(local, party);
      if (target === undefined) return OFFLINE;
      return target.connection.peer.forward(method, params as Record<string, unknown> | undefined, { timeoutMs });
    },
    async notify(party, message) {
      const target = localConnectionOf(local, party);
      if (target === undefined) return false;
      await target.connection.peer.send(message);
      return true;
    },
  };
}
