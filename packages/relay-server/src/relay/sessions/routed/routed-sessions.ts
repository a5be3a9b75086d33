import {
  InternalError,
  type JsonRpcNotification,
  type JsonRpcRequest,
  NotAuthorizedError,
  type ParamsOf,
  RateLimitedError,
  type WmpError,
} from '@wmp/jsonrpc-envelope';
import {
  type Connection,
  ConnectionClosedError,
  PassedError,
  RequestTimeoutError,
  type RouteOffer,
  type SessionRoutes,
  type SessionStore,
  type WmpContext,
} from '@wmp/session';
import type { Logger } from '../../support/logger.js';
import type { RefusalLog } from '../../support/refusals.js';
import type { PartyAnswer, PartyLinks } from './party-links.js';
import { InFlight, RoutesPerIdentity } from './route-bounds.js';
import {
  answeredSessionId,
  initiatorOf,
  type Party,
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
  /** Routed sessions one identity takes part in at once. */
  readonly maxRoutesPerIdentity: number;
  /** How long a responder has to answer an offered create before the relay hosts the session. */
  readonly offerTimeoutMs: number;
  /** How long a passed request waits for its answer (then -32603 `peer_timeout`). */
  readonly requestTimeoutMs: number;
  /** A routed session's lifetime when the create asks none, and the most it may ask. */
  readonly defaultTtlSeconds: number;
  readonly maxTtlSeconds: number;
}

/** What routed sessions take from the rest of the relay. */
export interface RoutedDeps {
  readonly relayId: string;
  readonly sessions: SessionStore;
  readonly links: PartyLinks;
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
    sender: string,
    to: Party,
    context: WmpContext,
  ): Promise<unknown>;
  readonly refusals: RefusalLog;
  readonly logger: Logger;
  readonly now: () => number;
}

/** Whether `connection` authenticated `identity` (on any session it carries). */
function authenticatedAs(connection: Connection, identity: string): boolean {
  if (connection.adopted === identity) return true;
  for (const binding of connection.sessions.values()) if (binding.identity === identity) return true;
  return false;
}

function claimedSender(message: JsonRpcRequest | JsonRpcNotification): unknown {
  return (message.params as { wmp?: { sender?: unknown } } | undefined)?.wmp?.sender;
}

/** -32603 with the reason a passed request got no answer (the party is gone, or slow). */
function unanswered(reason: 'peer_offline' | 'peer_timeout'): WmpError {
  return new InternalError({ reason });
}

/**
 * Sessions routed end to end through the relay (transport §6.2; docs/architecture.md, "Sessions
 * through the relay"): a create from an authenticated identity that names one other identity is
 * offered to that identity, whose answer is the answer; then every frame of the session passes
 * between the two, each way, for every method, with the relay binding each frame to the party
 * that sent it. When the other party cannot answer, the relay hosts the session as before.
 */
export class RoutedSessions implements SessionRoutes {
  readonly #deps: RoutedDeps;
  readonly #fromConnection: InFlight;
  readonly #onRoute: InFlight;
  readonly #perIdentity: RoutesPerIdentity;

  constructor(deps: RoutedDeps) {
    this.#deps = deps;
    this.#fromConnection = new InFlight(deps.limits.maxForwardedPerConnection, 'too many requests in flight');
    this.#onRoute = new InFlight(deps.limits.maxForwardedPerRoute, 'too many requests in flight on this session');
    this.#perIdentity = new RoutesPerIdentity(deps.limits.maxRoutesPerIdentity, deps.now);
  }

  async offer(params: ParamsOf<'wmp.session.create'>, ctx: WmpContext): Promise<RouteOffer | undefined> {
    const d = this.#deps;
    const initiator = params.wmp.sender;
    const listed = params.participants;
    if (initiator === undefined || listed?.length !== 1) return undefined;
    const responder = listed[0]!;
    if (responder === initiator || responder === d.relayId) return undefined;
    // Only on a connection that proved the initiator; else a session hosted here, as before.
    if (!authenticatedAs(ctx.connection, initiator)) return undefined;
    if (!(await d.admitOffer(initiator))) {
      d.refusals.note('route_offer_rate');
      throw new RateLimitedError({ reason: 'session offer rate' });
    }
    this.#perIdentity.check(initiator);
    const raw = (ctx.request.params ?? {}) as Record<string, unknown>;
    const offered = await d.offered(raw);
    let outcome: Awaited<ReturnType<PartyLinks['offer']>>;
    try {
      outcome = await d.links.offer(responder, offered, d.limits.offerTimeoutMs);
    } catch (e) {
      if (!(e instanceof RequestTimeoutError || e instanceof ConnectionClosedError)) throw e;
      outcome = undefined;
    }
    // No live connection, an error (a mailbox-only client: -32601), no create result, no answer
    // in time: the relay hosts the session instead, and says so.
    const id =
      outcome === undefined || 'error' in outcome.answer ? undefined : answeredSessionId(outcome.answer.result);
    if (outcome === undefined || id === undefined || !('result' in outcome.answer)) {
      d.refusals.note('route_offer_hosted');
      return { host: { relay_hosted: true } };
    }
    const now = d.now();
    const ttlSeconds = Math.min(params.ttl ?? d.limits.defaultTtlSeconds, d.limits.maxTtlSeconds);
    const initiatorHop = d.hopOf(ctx.connection, initiator);
    const route: RelayRoute = {
      initiator,
      responder,
      responderHop: outcome.hop,
      ...(initiatorHop === undefined ? {} : { initiatorHop }),
    };
    const answer = outcome.answer.result as Record<string, unknown>;
    const record = routedRecord({ id, version: params.wmp.version, route, answer, ttlSeconds, now });
    await this.#store(record);
    this.#perIdentity.add([initiator, responder], id, record.expiresAt);
    d.logger.debug('relay.route_opened', {});
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

  async pass(
    message: JsonRpcRequest | JsonRpcNotification,
    session: RelayRoutedRecord,
    ctx: WmpContext,
  ): Promise<unknown> {
    const route = session.route;
    const from = this.#partyOf(message, route, ctx.connection);
    const to = from === route.initiator ? responderOf(route) : initiatorOf(route);
    const isRequest = 'id' in message;
    switch (message.method) {
      case 'wmp.message.deliver':
        // Stored and forwarded like any deliver: queued while the other party is away.
        return this.#deps.deliver(message, session, from, to, ctx);
      case 'wmp.message.ack':
        // What the relay stored and forwarded is acknowledged to the relay.
        await this.#deps.ack(from, message.params);
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
    return this.#request(message as JsonRpcRequest, session, to, ctx.connection);
  }

  async #request(
    message: JsonRpcRequest,
    session: RelayRoutedRecord,
    to: Party,
    connection: Connection,
  ): Promise<unknown> {
    this.#fromConnection.take(connection.id);
    try {
      this.#onRoute.take(session.id);
    } catch (e) {
      this.#fromConnection.release(connection.id);
      throw e;
    }
    let answer: PartyAnswer;
    try {
      answer = await this.#deps.links.request(to, message.method, message.params, this.#deps.limits.requestTimeoutMs);
    } catch (e) {
      if (e instanceof RequestTimeoutError) throw unanswered('peer_timeout');
      if (e instanceof ConnectionClosedError) throw unanswered('peer_offline');
      throw e;
    } finally {
      this.#fromConnection.release(connection.id);
      this.#onRoute.release(session.id);
    }
    if ('offline' in answer) throw unanswered('peer_offline');
    if ('error' in answer) throw new PassedError(answer.error);
    return answer.result;
  }

  /**
   * The party that sent a frame: the connection must have authenticated it, and a `wmp.sender`
   * must name it; -31002 for anyone else, and nothing passes.
   */
  #partyOf(message: JsonRpcRequest | JsonRpcNotification, route: RelayRoute, connection: Connection): string {
    const claimed = claimedSender(message);
    const parties = [route.initiator, route.responder];
    if (claimed !== undefined) {
      if (typeof claimed === 'string' && parties.includes(claimed) && authenticatedAs(connection, claimed))
        return claimed;
      this.#deps.refusals.note('routed_not_a_party');
      throw new NotAuthorizedError({ reason: 'sender is not a party of this session' });
    }
    const proven = parties.filter((p) => authenticatedAs(connection, p));
    if (proven.length === 1) return proven[0]!;
    this.#deps.refusals.note('routed_not_a_party');
    throw new NotAuthorizedError({ reason: proven.length === 0 ? 'not a party of this session' : 'sender required' });
  }

  /** The route ends for both (its close passes on to the other party). */
  async #end(session: RelayRoutedRecord): Promise<void> {
    await this.#deps.sessions.delete(session.id);
    this.#perIdentity.remove([session.route.initiator, session.route.responder], session.id);
    this.#deps.logger.debug('relay.route_closed', {});
  }
}
