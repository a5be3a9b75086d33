import { RateLimitedError } from '@wmp/jsonrpc-envelope';
import type { Connection } from '@wmp/session';
import type { Endpoint } from '../support/endpoint.js';
import type { RelayEvents } from '../support/relay-events.js';

/** The identities with an endpoint on one connection: one as itself (no Set per connection), more as a Set. */
type Identities = string | Set<string>;

function withIdentity(identities: Identities | undefined, identity: string): Identities {
  if (identities === undefined || identities === identity) return identity;
  if (typeof identities === 'string') return new Set([identities, identity]);
  identities.add(identity);
  return identities;
}

function eachIdentity(identities: Identities | undefined): Iterable<string> {
  if (identities === undefined) return [];
  return typeof identities === 'string' ? [identities] : identities;
}

/** The endpoints of one identity: one as itself (one device, no Map per identity), more by connection id. */
type Endpoints = Endpoint | Map<number, Endpoint>;

function endpointOn(endpoints: Endpoints | undefined, connectionId: number): Endpoint | undefined {
  if (endpoints === undefined || endpoints instanceof Map) return endpoints?.get(connectionId);
  return endpoints.connection.id === connectionId ? endpoints : undefined;
}

function endpointCount(endpoints: Endpoints | undefined): number {
  if (endpoints === undefined) return 0;
  return endpoints instanceof Map ? endpoints.size : 1;
}

function withEndpoint(endpoints: Endpoints | undefined, endpoint: Endpoint): Endpoints {
  if (endpoints === undefined) return endpoint;
  if (endpoints instanceof Map) return endpoints.set(endpoint.connection.id, endpoint);
  return new Map([
    [endpoints.connection.id, endpoints],
    [endpoint.connection.id, endpoint],
  ]);
}

/** What is left once the endpoint on `connectionId` went (undefined: none). */
function withoutEndpoint(endpoints: Endpoints, connectionId: number): Endpoints | undefined {
  if (!(endpoints instanceof Map)) return endpoints.connection.id === connectionId ? undefined : endpoints;
  endpoints.delete(connectionId);
  return endpoints.size === 0 ? undefined : endpoints;
}

/** What presence tells the rooms above it: an identity came or went here, a connection is reachable again. */
export type PresenceEvents = Pick<RelayEvents, 'identityUp' | 'identityDown' | 'reachableAgain'>;

/**
 * Who is online: identity -> connection id -> endpoint. In memory (presence is ephemeral: a
 * restart drops every connection; registrations come back with `wmp.session.resume`).
 */
export class Presence {
  readonly #byIdentity = new Map<string, Endpoints>();
  readonly #maxPerIdentity: number;
  /** Connection id -> identities with an endpoint on it, so a close costs O(its endpoints). */
  readonly #byConnection = new Map<number, Identities>();
  readonly #byHopSession = new Map<string, Set<Endpoint>>();
  readonly #events: PresenceEvents;
  readonly #onGone: (endpoint: Endpoint) => void;
  #count = 0;

  constructor(maxPerIdentity: number, events: PresenceEvents, onGone: (endpoint: Endpoint) => void = () => undefined) {
    this.#maxPerIdentity = maxPerIdentity;
    this.#events = events;
    this.#onGone = onGone;
  }

  /** Registered or joined connections across identities. */
  get size(): number {
    return this.#count;
  }

  endpoints(identity: string): Iterable<Endpoint> {
    const endpoints = this.#byIdentity.get(identity);
    if (endpoints === undefined) return [];
    return endpoints instanceof Map ? endpoints.values() : [endpoints];
  }

  /** Whether the identity has an endpoint here now (registered or joined). */
  isOnline(identity: string): boolean {
    return this.#byIdentity.has(identity);
  }

  /**
   * The identity's newest live registered endpoint (the highest connection id whose registration
   * holds at `now` on a session its connection still carries); a routed session is offered there.
   */
  newestRegistered(identity: string, now: number): Endpoint | undefined {
    let newest: Endpoint | undefined;
    for (const e of this.endpoints(identity)) {
      const hop = e.hopSession;
      if (hop === undefined || e.registeredUntil <= now || e.connection.peer.closed || !e.connection.sessions.has(hop))
        continue;
      if (newest === undefined || e.connection.id > newest.connection.id) newest = e;
    }
    return newest;
  }

  get(identity: string, connection: Connection): Endpoint | undefined {
    return endpointOn(this.#byIdentity.get(identity), connection.id);
  }

  /**
   * The endpoint of `identity` on `connection`, made when missing (from `cursor`). A new one
   * beyond `maxConnectionsPerIdentity` is -31007, unless `soft`, which returns undefined instead.
   */
  ensure(identity: string, connection: Connection, cursor: number, soft = false): Endpoint | undefined {
    if (connection.peer.closed) return undefined;
    const endpoints = this.#byIdentity.get(identity);
    const existing = endpointOn(endpoints, connection.id);
    if (existing) return existing;
    if (endpointCount(endpoints) >= this.#maxPerIdentity) {
      if (soft) return undefined;
      throw new RateLimitedError({ reason: 'too many connections for this identity' });
    }
    if (endpoints === undefined) this.#events.identityUp(identity);
    const endpoint: Endpoint = {
      identity,
      connection,
      hopSession: undefined,
      registeredUntil: 0,
      statuses: false,
      assurance: 'low',
      delegate: undefined,
      evidence: false,
      cursor,
      held: false,
      running: false,
      again: false,
      replay: undefined,
    };
    this.#byIdentity.set(identity, withEndpoint(this.#byIdentity.get(identity), endpoint));
    this.#count++;
    const identities = this.#byConnection.get(connection.id);
    this.#byConnection.set(connection.id, withIdentity(identities, identity));
    if (identities === undefined) {
      connection.peer.transport.onreachable = () => {
        for (const id of eachIdentity(this.#byConnection.get(connection.id))) {
          const e = endpointOn(this.#byIdentity.get(id), connection.id);
          if (e) this.#events.reachableAgain(e);
        }
      };
    }
    return endpoint;
  }

  /**
   * Registers `endpoint` on a hop session until `until` (a second register moves it); whether that
   * session takes statuses and evidence notifications.
   */
  setHop(endpoint: Endpoint, sessionId: string, until: number, statuses: boolean, evidence = false): void {
    if (endpoint.hopSession !== undefined) this.#unhop(endpoint);
    endpoint.hopSession = sessionId;
    endpoint.registeredUntil = until;
    endpoint.statuses = statuses;
    endpoint.evidence = evidence;
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
    endpoint.evidence = false;
  }

  /**
   * The connection is gone (the server's `connectionClosed` hook): its endpoints go. Through the
   * hook rather than a listener on the peer's signal, which would make one per connection.
   */
  connectionClosed(connection: Connection): void {
    if (this.#byConnection.has(connection.id)) this.#remove(connection);
  }

  #remove(connection: Connection): void {
    for (const identity of eachIdentity(this.#byConnection.get(connection.id))) {
      const endpoints = this.#byIdentity.get(identity);
      const endpoint = endpointOn(endpoints, connection.id);
      if (!endpoints || !endpoint) continue;
      this.#unhop(endpoint);
      this.#count--;
      const left = withoutEndpoint(endpoints, connection.id);
      if (left === undefined) {
        this.#byIdentity.delete(identity);
        this.#events.identityDown(identity);
      } else this.#byIdentity.set(identity, left);
      this.#onGone(endpoint);
    }
    this.#byConnection.delete(connection.id);
  }
}
