import type { Connection } from '@wmp/session';
import type { AssuranceLevel } from './assurance.js';

/**
 * One live connection of an identity that the relay forwards to (one device). It reads the
 * identity's queue in seq order from `cursor`; `hopSession` is the session it registered on
 * (hop messages go there), and group messages go on their group session when the connection
 * is bound to it.
 */
export interface Endpoint {
  readonly identity: string;
  readonly connection: Connection;
  /** The registered hop session on this connection, if any, and until when it holds. */
  hopSession: string | undefined;
  registeredUntil: number;
  /** Whether that session negotiated `offline.status_notifications` (statuses go there). */
  statuses: boolean;
  /**
   * The level the connection's identity authenticated at (core §3.5.1): content asking for more
   * is never written here. `low` until a registration says otherwise.
   */
  assurance: AssuranceLevel;
  /** The delegate that registered here for `identity` (core §3.3, recipient side), if one did. */
  delegate: string | undefined;
  /** Whether that session negotiated `evidence` (`wmp.evidence.notify` goes there). */
  evidence: boolean;
  /** The last queue seq handed to this connection (or skipped as not for it). */
  cursor: number;
  /**
   * A resume on this connection is not answered yet: nothing goes out until it is (decision
   * 0734), since its client would acknowledge on the connection it left.
   */
  held: boolean;
  /** A pump is reading the queue for this endpoint; `again` asks it for one more pass. */
  running: boolean;
  again: boolean;
  /**
   * After a group join: the queue up to seq `until` is read again from the start (`restart`: the
   * pump has not gone back yet), and of it only the messages of `sessions` are sent (the rest went
   * out, or was not for this connection, before).
   */
  replay: { until: number; readonly sessions: Set<string>; restart: boolean } | undefined;
}

/** Whether a message sent to this connection now reaches it (an HTTP session only with an open SSE stream). */
export function reachable(endpoint: Endpoint): boolean {
  return endpoint.connection.peer.transport.reachable !== false;
}
