import {
  InternalError,
  type JsonRpcErrorObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  NotAuthorizedError,
  type ParamsOf,
  RateLimitedError,
  SessionNotFoundError,
  type WmpError,
} from '@wmp/jsonrpc-envelope';
import {
  type Connection,
  ConnectionClosedError,
  isExpired,
  isRouted,
  PassedError,
  RequestTimeoutError,
  type RouteOffer,
  type SessionRoutes,
  type SessionStore,
  schemeOf,
  UNKNOWN_SESSION,
  type WmpContext,
} from '@wmp/session';
import type { Logger } from '../../support/logger.js';
import type { RelayMetrics } from '../../support/metrics.js';
import type { OpsLog } from '../../support/ops-events.js';
import type { RefusalLog } from '../../support/refusals.js';
import type { PartyAnswer, PartyLinks, PartyOffer } from './party-links.js';
import { InFlight, RoutesPerIdentity, takeSlots } from './route-bounds.js';
import { authenticatedAs, partyOnConnection, partyOverLink } from './route-parties.js';
import {
  answeredSessionId,
  initiatorOf,
  type Party,
  peerRelayOf,
  type RelayRoute,
  type RelayRoutedRecord,
  responderOf,
  routedRecord,
} from './route-record.js';

/** The bounds of routed sessions (each has a test). */
export interface RoutedLimits {
  /** Requests from one connection passed on and not yet answered. */
  readonly maxForwardedPerConnection: number;
  /** Requests on one routed session passed on and not yet answered. */
  readonly maxForwardedPerRoute: number;
  /** Requests passed on from or to one peer relay (all its users together) and not yet answered. */
  readonly maxForwardedPerPeer: number;
  /** Routed sessions one identity takes part in at once. */
  readonly maxRoutesPerIdentity: number;
  /** Routed sessions one peer relay's users opened here, together. */
  readonly maxRoutesPerPeer: number;
  /** How long a responder has to answer an offered create before the relay hosts the session. */
  readonly offerTimeoutMs: number;
  /** How long a passed request waits for its answer (then -32603 `peer_timeout`). */
  readonly requestTimeoutMs: number;
  /** A routed session's lifetime when the create asks none, and the most it may ask. */
  readonly defaultTtlSeconds: number;
  readonly maxTtlSeconds: number;
}

/** What routed sessions take of federation: creates that peer relays pass on for their users. */
export interface RoutedPeers {
  /** The relay_id of the peer relay `connection` is the link of, or undefined. */
  peerOn(connection: Connection): Promise<string | undefined>;
  /**
   * A create the peer passes on for one of its users, bound as its forwards are (-31002 and the
   * like): the peer's origin ('' when unknown) and the create as it goes on from here.
   */
  accept(
    params: Record<string, unknown>,
    peerId: string,
  ): Promise<{ readonly origin: string; readonly offered: Record<string, unknown> }>;
}

/** What routed sessions take from the rest of the relay. */
export interface RoutedDeps {
  readonly relayId: string;
  readonly sessions: SessionStore;
  /** Every party: here, on the cluster's other nodes, at peer relays. */
  readonly links: PartyLinks;
  /** The parties connected to this relay (this node and its cluster): a create a peer passed on goes no further. */
  readonly homeLinks: PartyLinks;
  /** Creates of peer relays' users; undefined with federation off. */
  readonly peers: RoutedPeers | undefined;
  readonly limits: RoutedLimits;
  /** One offer of `identity` (a rate shared by the nodes of a cluster); false: over it. */
  admitOffer(identity: string): Promise<boolean>;
  /** The hop session `identity` is reached on over `connection` (its registered one, else any it authenticated). */
  hopOf(connection: Connection, identity: string): string | undefined;
  /** The create as offered: the initiator's params with this relay's relay_chain entry added. */
  offered(params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Acknowledgements of messages the relay stored for `identity` (they are the relay's, not the other party's). */
  ack(identity: string, params: unknown): Promise<void>;
  /** A deliver on a routed session: stored and forwarded to `to` like any deliver. */
  deliver(
    request: JsonRpcRequest | JsonRpcNotification,
    route: RelayRoutedRecord,
    from: Party,
    to: Party,
    context: WmpContext,
  ): Promise<unknown>;
  readonly refusals: RefusalLog;
  readonly metrics: Pick<RelayMetrics, 'routedOpened' | 'routedClosed' | 'routedFrames'>;
  readonly ops: OpsLog;
  readonly logger: Logger;
  readonly now: () => number;
}

/** -32603 with the reason a passed request got no answer (the party is gone, or slow). */
function unanswered(reason: 'peer_offline' | 'peer_timeout'): WmpError {
  return new InternalError({ reason });
}

/** A peer relay's refusal of an answer whose id is in use there: the initiator hears it (nothing routed). */
function inUseAtPeer(offered: PartyOffer | undefined): JsonRpcErrorObject | undefined {
  if (offered?.via === undefined || !('error' in offered.answer)) return undefined;
  const { error } = offered.answer;
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return error.code === -32603 && reason === 'session_id_in_use' ? error : undefined;
}

/** The close of a route as its initiator would send it. */
function closeOf(record: RelayRoutedRecord): JsonRpcNotification {
  const wmp = { version: record.version, session_id: record.id, sender: record.route.initiator };
  return { jsonrpc: '2.0', method: 'wmp.session.close', params: { wmp } };
}

function hasRelayChain(params: Record<string, unknown>): boolean {
  return Array.isArray((params.wmp as { relay_chain?: unknown } | undefined)?.relay_chain);
}

/**
 * Sessions routed end to end through the relay (transport §6.2; docs/architecture.md, "Sessions
 * through the relay"): a create from an authenticated identity that names one other identity is
 * offered to that identity (here, on another node, or at its home relay), whose answer is the
 * answer; then every frame of the session passes between the two, each way, for every method,
 * with the relay binding each frame to the party that sent it. When the other party cannot
 * answer, the relay hosts the session as before. A create a peer relay passes on for one of its
 * users is offered to the parties connected here only, and never hosted here.
 */
export class RoutedSessions implements SessionRoutes {
  readonly #deps: RoutedDeps;
  readonly #fromConnection: InFlight;
  readonly #onRoute: InFlight;
  readonly #withPeer: InFlight;
  readonly #perIdentity: RoutesPerIdentity;
  readonly #perPeer: RoutesPerIdentity;

  constructor(deps: RoutedDeps) {
    this.#deps = deps;
    const { limits, now } = deps;
    this.#fromConnection = new InFlight(limits.maxForwardedPerConnection, 'too many requests in flight');
    this.#onRoute = new InFlight(limits.maxForwardedPerRoute, 'too many requests in flight on this session');
    this.#withPeer = new InFlight(limits.maxForwardedPerPeer, 'too many requests in flight with this peer');
    this.#perIdentity = new RoutesPerIdentity(limits.maxRoutesPerIdentity, now);
    this.#perPeer = new RoutesPerIdentity(limits.maxRoutesPerPeer, now, 'too many routed sessions of this peer');
  }

  async offer(params: ParamsOf<'wmp.session.create'>, ctx: WmpContext): Promise<RouteOffer | undefined> {
    const d = this.#deps;
    const initiator = params.wmp.sender;
    const listed = params.participants;
    if (initiator === undefined || listed?.length !== 1) return undefined;
    const responder = listed[0]!;
    if (responder === initiator || responder === d.relayId) return undefined;
    const raw = (ctx.request.params ?? {}) as Record<string, unknown>;
    if (authenticatedAs(ctx.connection, initiator)) return this.#offerFromHere(params, raw, responder, ctx);
    // A peer relay passing on the create of one of its users carries a relay chain; anything else
    // on a connection that did not prove the initiator is a session hosted here, as before.
    const peerId = d.peers !== undefined && hasRelayChain(raw) ? await d.peers.peerOn(ctx.connection) : undefined;
    return peerId === undefined ? undefined : this.#offerFromPeer(params, raw, responder, peerId);
  }

  async #admit(initiator: string, peerId?: string): Promise<void> {
    const d = this.#deps;
    if (!(await d.admitOffer(initiator))) {
      d.refusals.note('route_offer_rate');
      throw new RateLimitedError({ reason: 'session offer rate' });
    }
    this.#perIdentity.check(initiator);
    if (peerId !== undefined) this.#perPeer.check(peerId);
  }

  async #offerFromHere(
    params: ParamsOf<'wmp.session.create'>,
    raw: Record<string, unknown>,
    responder: string,
    ctx: WmpContext,
  ): Promise<RouteOffer> {
    const d = this.#deps;
    const initiator = params.wmp.sender!;
    await this.#admit(initiator);
    const offered = await d.offered(raw);
    let outcome: PartyOffer | undefined;
    try {
      outcome = await d.links.offer(responder, offered, d.limits.offerTimeoutMs);
    } catch (e) {
      if (!(e instanceof RequestTimeoutError || e instanceof ConnectionClosedError)) throw e;
      outcome = undefined;
    }
    const inUse = inUseAtPeer(outcome);
    if (inUse !== undefined) throw new PassedError(inUse);
    // No live connection, an error (a mailbox-only client: -32601), no create result, no answer
    // in time: the relay hosts the session instead, and says so.
    const id =
      outcome === undefined || 'error' in outcome.answer ? undefined : answeredSessionId(outcome.answer.result);
    if (outcome === undefined || id === undefined) {
      d.refusals.note('route_offer_hosted');
      return { host: { relay_hosted: true } };
    }
    const initiatorHop = d.hopOf(ctx.connection, initiator);
    const route: RelayRoute = {
      initiator,
      responder,
      ...(outcome.hop === undefined ? {} : { responderHop: outcome.hop }),
      ...(outcome.via === undefined ? {} : { responderVia: outcome.via }),
      ...(initiatorHop === undefined ? {} : { initiatorHop }),
    };
    return this.#open(params, route, id, outcome);
  }

  /** A create a peer relay passed on: offered to the responder's connections here, its answer (or why none) the answer. */
  async #offerFromPeer(
    params: ParamsOf<'wmp.session.create'>,
    raw: Record<string, unknown>,
    responder: string,
    peerId: string,
  ): Promise<RouteOffer> {
    const d = this.#deps;
    const initiator = params.wmp.sender!;
    const { origin, offered } = await d.peers!.accept(raw, peerId);
    await this.#admit(initiator, peerId);
    let outcome: PartyOffer | undefined;
    try {
      outcome = await d.homeLinks.offer(responder, offered, d.limits.offerTimeoutMs);
    } catch (e) {
      if (e instanceof RequestTimeoutError) throw unanswered('peer_timeout');
      if (e instanceof ConnectionClosedError) throw unanswered('peer_offline');
      throw e;
    }
    // The peer hosts the session itself when the responder cannot answer: this relay says why.
    if (outcome === undefined) throw unanswered('peer_offline');
    if ('error' in outcome.answer) throw new PassedError(outcome.answer.error);
    const id = answeredSessionId(outcome.answer.result);
    if (id === undefined) throw new InternalError({ reason: 'no create result' });
    const route: RelayRoute = {
      initiator,
      initiatorVia: { peer: peerId, ...(origin === '' ? {} : { origin }) },
      responder,
      ...(outcome.hop === undefined ? {} : { responderHop: outcome.hop }),
    };
    return this.#open(params, route, id, outcome);
  }

  /** Records the route the responder accepted, and passes its answer on unchanged. */
  async #open(
    params: ParamsOf<'wmp.session.create'>,
    route: RelayRoute,
    id: string,
    outcome: PartyOffer,
  ): Promise<RouteOffer> {
    const d = this.#deps;
    const now = d.now();
    const ttlSeconds = Math.min(params.ttl ?? d.limits.defaultTtlSeconds, d.limits.maxTtlSeconds);
    const answer = (outcome.answer as { result: Record<string, unknown> }).result;
    const record = routedRecord({ id, version: params.wmp.version, route, answer, ttlSeconds, now });
    try {
      await this.#store(record);
    } catch (e) {
      // A peer relay that took the answer holds a route nobody else has: it is closed there.
      if (route.responderVia !== undefined)
        void d.links.notify(responderOf(route), closeOf(record)).catch(() => undefined);
      throw e;
    }
    this.#perIdentity.add([route.initiator, route.responder], id, record.expiresAt);
    if (route.initiatorVia !== undefined) this.#perPeer.add([peerRelayOf(route.initiatorVia)], id, record.expiresAt);
    d.metrics.routedOpened++;
    d.ops.event('session.opened', { kind: 'routed', scheme: schemeOf(route.initiator) });
    return { answer };
  }

  /** Stores a new route; an id the relay already knows is refused (the signed challenge binds ids end to end). */
  async #store(record: RelayRoutedRecord): Promise<void> {
    const inUse = () => new InternalError({ reason: 'session_id_in_use' });
    if ((await this.#deps.sessions.get(record.id)) !== undefined) throw inUse();
    try {
      await this.#deps.sessions.create(record);
    } catch (e) {
      if (e instanceof RangeError) throw inUse();
      throw e;
    }
  }

  /** A frame of a routed session from a connection here. */
  async pass(
    message: JsonRpcRequest | JsonRpcNotification,
    session: RelayRoutedRecord,
    ctx: WmpContext,
  ): Promise<unknown> {
    const from = this.#refusing(() => partyOnConnection(message, session.route, ctx.connection));
    return this.#passFrom(message, session, from, ctx.connection.id, ctx);
  }

  /**
   * A frame of a routed session the peer at `origin` sent over our link to it: only for the party
   * that peer speaks for on that route (-31002 else), and no deliver (those come through the
   * peer's outbox, to be stored and acknowledged as any forward).
   */
  async passOverLink(origin: string, message: JsonRpcRequest | JsonRpcNotification): Promise<unknown> {
    const d = this.#deps;
    const named = (message.params as { wmp?: { session_id?: unknown } } | undefined)?.wmp?.session_id;
    const session = typeof named === 'string' ? await d.sessions.get(named) : undefined;
    if (session === undefined || !isRouted(session) || isExpired(session, d.now())) {
      throw new SessionNotFoundError(UNKNOWN_SESSION);
    }
    const routed = session as RelayRoutedRecord;
    const from = this.#refusing(() => partyOverLink(message, routed.route, origin));
    if (message.method === 'wmp.message.deliver')
      throw new NotAuthorizedError({ reason: 'deliver through the outbox' });
    return this.#passFrom(message, routed, from, undefined, undefined);
  }

  #refusing(party: () => Party): Party {
    try {
      return party();
    } catch (e) {
      this.#deps.refusals.note('routed_not_a_party');
      throw e;
    }
  }

  async #passFrom(
    message: JsonRpcRequest | JsonRpcNotification,
    session: RelayRoutedRecord,
    from: Party,
    connectionId: number | undefined,
    ctx: WmpContext | undefined,
  ): Promise<unknown> {
    const route = session.route;
    const to = from.id === route.initiator ? responderOf(route) : initiatorOf(route);
    const isRequest = 'id' in message;
    this.#deps.metrics.routedFrames++;
    switch (message.method) {
      case 'wmp.message.deliver':
        // Stored and forwarded like any deliver: queued while the other party is away.
        return this.#deps.deliver(message, session, from, to, ctx!);
      case 'wmp.message.ack':
        // What the relay stored and forwarded is acknowledged to the relay; each relay takes its own.
        if (from.via !== undefined) throw new NotAuthorizedError({ reason: 'acknowledged at its own relay' });
        await this.#deps.ack(from.id, message.params);
        return isRequest ? {} : undefined;
      case 'wmp.session.join':
        throw new NotAuthorizedError({ reason: 'routed session' });
      case 'wmp.session.close':
        await this.#end(session);
        break;
    }
    if (!isRequest) {
      if (!(await this.#deps.links.notify(to, message))) this.#deps.refusals.note('routed_peer_offline');
      return undefined;
    }
    return this.#request(message as JsonRpcRequest, session, from, to, connectionId);
  }

  /**
   * Passes a request on within its bounds: requests in flight from the sending connection, on the
   * route, and with a peer relay (a peer's link carries all its users: one bound for all of them).
   */
  async #request(
    message: JsonRpcRequest,
    session: RelayRoutedRecord,
    from: Party,
    to: Party,
    connectionId: number | undefined,
  ): Promise<unknown> {
    const peer = from.via ?? to.via;
    const release = takeSlots([
      ...(from.via === undefined && connectionId !== undefined ? [[this.#fromConnection, connectionId] as const] : []),
      [this.#onRoute, session.id],
      ...(peer === undefined ? [] : [[this.#withPeer, peerRelayOf(peer)] as const]),
    ]);
    let answer: PartyAnswer;
    try {
      answer = await this.#deps.links.request(to, message.method, message.params, this.#deps.limits.requestTimeoutMs);
    } catch (e) {
      if (e instanceof RequestTimeoutError) throw unanswered('peer_timeout');
      if (e instanceof ConnectionClosedError) throw unanswered('peer_offline');
      throw e;
    } finally {
      release();
    }
    if ('offline' in answer) throw unanswered('peer_offline');
    if ('error' in answer) throw new PassedError(answer.error);
    return answer.result;
  }

  /** The route ends for both (its close passes on to the other party). */
  async #end(session: RelayRoutedRecord): Promise<void> {
    const { route } = session;
    await this.#deps.sessions.delete(session.id);
    this.#perIdentity.remove([route.initiator, route.responder], session.id);
    if (route.initiatorVia !== undefined) this.#perPeer.remove([peerRelayOf(route.initiatorVia)], session.id);
    this.#deps.metrics.routedClosed++;
    this.#deps.ops.event('session.closed', { kind: 'routed' });
  }
}
