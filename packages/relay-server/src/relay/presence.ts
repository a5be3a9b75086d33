import { RateLimitedError } from '@wmp/jsonrpc-envelope';
import type { Connection } from '@wmp/session';

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
  /** The last queue seq handed to this connection (or skipped as not for it). */
  cursor: number;
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

/**
 * Who is online: identity -> connection id -> endpoint. In memory (presence is ephemeral: a
 * restart drops every connection; registrations come back with `wmp.session.resume`).
 */
export class Presence {
  readonly #byIdentity = new Map<string, Map<number, Endpoint>>();
  readonly #maxPerIdentity: number;
  /** Connection id -> identities with an endpoint on it, so a close costs O(its endpoints). */
  readonly #byConnection = new Map<number, Set<string>>();
  readonly #byHopSession = new Map<string, Set<Endpoint>>();
  readonly #onGone: (endpoint: Endpoint) => void;
  #count = 0;
  /** A connection that was not reachable (an HTTP session without a stream) is again. */
  onreachable: ((endpoint: Endpoint) => void) | undefined;
  /** The first endpoint of an identity on this node appeared / the last one went (cluster wake-ups). */
  onidentityup: ((identity: string) => void) | undefined;
  onidentitydown: ((identity: string) => void) | undefined;

  constructor(maxPerIdentity: number, onGone: (endpoint: Endpoint) => void = () => undefined) {
    this.#maxPerIdentity = maxPerIdentity;
    this.#onGone = onGone;
  }

  /** Registered or joined connections across identities. */
  get size(): number {
    return this.#count;
  }

  endpoints(identity: string): Iterable<Endpoint> {
    return this.#byIdentity.get(identity)?.values() ?? [];
  }

  /** Whether the identity has an endpoint here now (registered or joined). */
  isOnline(identity: string): boolean {
    return (this.#byIdentity.get(identity)?.size ?? 0) > 0;
  }

  get(identity: string, connection: Connection): Endpoint | undefined {
    return this.#byIdentity.get(identity)?.get(connection.id);
  }

  /**
   * The endpoint of `identity` on `connection`, made when missing (from `cursor`). A new one
   * beyond `maxConnectionsPerIdentity` is -31007, unless `soft`, which returns undefined instead.
   */
  ensure(identity: string, connection: Connection, cursor: number, soft = false): Endpoint | undefined {
    if (connection.peer.closed) return undefined;
    let map = this.#byIdentity.get(identity);
    const existing = map?.get(connection.id);
    if (existing) return existing;
    if ((map?.size ?? 0) >= this.#maxPerIdentity) {
      if (soft) return undefined;
      throw new RateLimitedError({ reason: 'too many connections for this identity' });
    }
    if (!map) {
      map = new Map();
      this.#byIdentity.set(identity, map);
      this.onidentityup?.(identity);
    }
    const endpoint: Endpoint = {
      identity,
      connection,
      hopSession: undefined,
      registeredUntil: 0,
      statuses: false,
      cursor,
      running: false,
      again: false,
      replay: undefined,
    };
    map.set(connection.id, endpoint);
    this.#count++;
    let identities = this.#byConnection.get(connection.id);
    if (!identities) {
      identities = new Set();
      this.#byConnection.set(connection.id, identities);
      // The server owns `peer.onclose`; the peer's signal aborts on close and is ours to listen to.
      connection.peer.signal.addEventListener('abort', () => this.#remove(connection), { once: true });
      connection.peer.transport.onreachable = () => {
        for (const id of this.#byConnection.get(connection.id) ?? []) {
          const e = this.#byIdentity.get(id)?.get(connection.id);
          if (e) this.onreachable?.(e);
        }
      };
    }
    identities.add(identity);
    return endpoint;
  }

  /** Registers `endpoint` on a hop session until `until` (a second register moves it). */
  setHop(endpoint: Endpoint, sessionId: string, until: number, statuses: boolean): void {
    if (endpoint.hopSession !== undefined) this.#unhop(endpoint);
    endpoint.hopSession = sessionId;
    endpoint.registeredUntil = until;
    endpoint.statuses = statuses;
    let set = this.#byHopSession.get(sessionId);
    if (!set) {
      set = new Set();
      this.#byHopSession.set(sessionId, set);
    }
    set.add(endpoint);
  }

  /** A session ended: its registrations stop (the connection may still carry others). */
  dropSession(sessionId: string): void {
    for (const e of [...(this.#byHopSession.get(sessionId) ?? [])]) this.#unhop(e);
  }

  #unhop(endpoint: Endpoint): void {
    const id = endpoint.hopSession;
    if (id === undefined) return;
    const set = this.#byHopSession.get(id);
    set?.delete(endpoint);
    if (set?.size === 0) this.#byHopSession.delete(id);
    endpoint.hopSession = undefined;
    endpoint.registeredUntil = 0;
    endpoint.statuses = false;
  }

  #remove(connection: Connection): void {
    for (const identity of this.#byConnection.get(connection.id) ?? []) {
      const map = this.#byIdentity.get(identity);
      const endpoint = map?.get(connection.id);
      if (!map || !endpoint) continue;
      this.#unhop(endpoint);
      map.delete(connection.id);
      this.#count--;
      if (map.size === 0) {
        this.#byIdentity.delete(identity);
        this.onidentitydown?.(identity);
      }
      this.#onGone(endpoint);
    }
    this.#byConnection.delete(connection.id);
  }
}
