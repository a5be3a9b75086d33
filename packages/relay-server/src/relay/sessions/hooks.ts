import { ErrorCode, type WmpError } from '@wmp/jsonrpc-envelope';
import { type Connection, newMessageId, type ServerHooks, type SessionRecord, schemeOf } from '@wmp/session';
import type { MlsGroupStore } from '../../storage/contracts/mls-group-store.js';
import type { QueueRemoval, QueueStore } from '../../storage/contracts/queue-store.js';
import type { EvidenceWitness } from '../evidence/evidence-witness.js';
import type { Presence } from '../presence/presence.js';
import type { Forwarder } from '../routing/forwarder.js';
import { isGroupSession } from '../routing/recipients.js';
import { STATUS_METHOD } from '../routing/routed-message.js';
import { type StatusNotifier, wantsStatuses } from '../statuses/statuses.js';
import type { AssuranceLevel } from '../support/assurance.js';
import type { Endpoint } from '../support/endpoint.js';
import type { Logger } from '../support/logger.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { OpsLog } from '../support/ops-events.js';
import type { RefusalLog } from '../support/refusals.js';
import type { RelayLimiters } from '../support/relay-limiters.js';
import { metaFor } from '../support/session-meta.js';
import { actingFor, principalsOf, recipientsActedFor } from './delegations.js';
import { refusedMessageId } from './message-ids.js';
import { registrationsOf, routeEndpoint } from './registration.js';

/** What the session engine's hooks reach: the queue, presence and its pumps, statuses, MLS group state. */
export interface HookDeps {
  readonly queue: Pick<QueueStore, 'ack' | 'ackThrough' | 'after' | 'undelivered'>;
  readonly presence: Pick<Presence, 'ensure' | 'setHop' | 'connectionClosed' | 'dropSession'>;
  readonly forwarder: Pick<Forwarder, 'pump' | 'rewind' | 'flushMarks' | 'acknowledged' | 'hold' | 'release'>;
  readonly statuses: Pick<StatusNotifier, 'terminal'>;
  /** Acknowledged messages under evidence: their retrieval is recorded. */
  readonly evidence: Pick<EvidenceWitness, 'queueEvent'>;
  readonly groups: Pick<MlsGroupStore, 'delete'>;
  readonly limiters: Pick<RelayLimiters, 'chargeRequests'>;
  readonly refusals: RefusalLog;
  readonly metrics: RelayMetrics;
  readonly logger: Logger;
  /** The operator's log events. */
  readonly ops: OpsLog;
  /** The relay's own identity: the statuses it keeps (queued as sent by it) are not counted as missed. */
  readonly relayId: string;
  /** Auth type -> assurance level, for the connections routes are restored to. */
  readonly assurance: Readonly<Record<string, AssuranceLevel>>;
  now(): number;
}

/** Messages a recipient acknowledged: `delivered` to their senders (unless sent already), retrieval to evidence. */
export function acknowledged(
  s: Pick<HookDeps, 'statuses' | 'evidence' | 'forwarder'>,
  removed: readonly QueueRemoval[],
): void {
  s.forwarder.acknowledged(removed);
  s.statuses.terminal(removed, 'delivered');
  s.evidence.queueEvent({ kind: 'acknowledged', entries: removed });
}

/** Queue entries one poll returns at most. */
const MAX_POLL = 100;

/** Methods that open or carry a session: an error on them that says "not you" is a refused authentication. */
const OPENING = new Set(['wmp.session.create', 'wmp.session.resume', 'wmp.session.join']);
const REFUSING_CODES = new Set<number>([ErrorCode.NotAuthorized, ErrorCode.IdentityAssertionInvalid]);

/** Whether an error answer refused an authentication (any error of `authenticate`; "not you" of an open). */
function refusesAuthentication(method: string, error: WmpError): boolean {
  return method === 'wmp.session.authenticate' || (OPENING.has(method) && REFUSING_CODES.has(error.code));
}

/** The reason an error gives (`data.reason`: one of the family's fixed strings), short, for a log line. */
function reasonOf(error: WmpError): string | undefined {
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason.slice(0, 80) : undefined;
}

const kindOf = (session: SessionRecord): string => (isGroupSession(session) ? 'group' : 'hop');

/**
 * Routes `identity` to `connection` again for a session carried onto it (resume, adoption): its
 * hop registration while unexpired, or the group session it belongs to.
 */
function restoreRoute(
  s: HookDeps,
  session: SessionRecord,
  identity: string,
  connection: Connection,
  unrouted: string,
  acting = identity,
): Endpoint | undefined {
  const until = registrationsOf(session)[identity];
  let endpoint: Endpoint | undefined;
  if (until !== undefined && until > s.now()) {
    endpoint = s.presence.ensure(identity, connection, 0, true);
    if (endpoint) routeEndpoint(s, endpoint, session, acting, until);
  } else if (isGroupSession(session)) {
    endpoint = s.presence.ensure(identity, connection, 0, true);
  }
  if (endpoint === undefined && (until !== undefined || isGroupSession(session))) {
    s.logger.warn(unrouted, { reason: 'connections per identity' });
  }
  return endpoint;
}

/**
 * The routes a session carried onto `connection` gives `identity` there: its own, and those of
 * the principals it registered for as their delegate (while each delegation holds).
 */
function restoreRoutes(
  s: HookDeps,
  session: SessionRecord,
  identity: string,
  connection: Connection,
  unrouted: string,
): Endpoint[] {
  const endpoints: Endpoint[] = [];
  const own = restoreRoute(s, session, identity, connection, unrouted);
  if (own) endpoints.push(own);
  for (const principal of principalsOf(session, identity, s.now())) {
    const endpoint = restoreRoute(s, session, principal, connection, unrouted, identity);
    if (endpoint) endpoints.push(endpoint);
  }
  return endpoints;
}

/**
 * The WmpServer hooks a relay fills in (besides `deliver`): acknowledgements remove from the
 * queue and tell the sender `delivered`; a resume acknowledges through `last_received_id`,
 * restores the registration on the new connection and replays the rest in order; poll reads the
 * queue without removing anything; a join of a group session hands over the group's backlog; a
 * session that ends takes its registrations (and its MLS group state) with it.
 */
export function relayHooks(s: HookDeps): Omit<ServerHooks, 'deliver'> {
  return {
    // A delegate's acknowledgement covers the queues of the principals it receives for too.
    async ack(params, ctx) {
      for (const recipient of recipientsActedFor(ctx, s.now())) {
        const removed = await s.queue.ack(recipient, params.message_ids);
        s.ops.event('message.acked', { count: removed.length });
        acknowledged(s, removed);
      }
    },

    async poll(params, ctx) {
      const recipient = actingFor(ctx);
      if (recipient === undefined) return { messages: [], has_more: false };
      const limit = Math.min(params.limit ?? MAX_POLL, MAX_POLL);
      const page = await s.queue.after(recipient, params.since, limit, s.now());
      return { messages: page.messages.map((m) => JSON.parse(m.body) as unknown), has_more: page.more };
    },

    async resume(session, identity, lastReceivedId, connection) {
      if (identity === undefined) return 0;
      if (lastReceivedId !== undefined) {
        acknowledged(s, await s.queue.ackThrough(identity, lastReceivedId));
      }
      const endpoints = restoreRoutes(s, session, identity, connection, 'relay.resume_unrouted');
      // Nothing goes out on them before the answer, not even a message routed meanwhile (decision 0734).
      for (const endpoint of endpoints) s.forwarder.hold(endpoint);
      try {
        // What it missed: messages never written to any of its connections (the rest it had; they
        // are sent again, as unacknowledged, and deduplicated by id). Written ones are marked first.
        await s.forwarder.flushMarks();
        return await s.queue.undelivered(identity, s.now(), s.relayId);
      } finally {
        // After the resume answer, so the client knows its session before the replay arrives.
        for (const endpoint of endpoints) setTimeout(() => s.forwarder.release(endpoint), 0);
      }
    },

    // An HTTP session another node began (a cluster without sticky sessions): it routes here now,
    // as after a resume; what it missed is pumped once its event stream is open.
    adopted(session, identity, connection) {
      if (identity === undefined) return;
      for (const endpoint of restoreRoutes(s, session, identity, connection, 'relay.adopt_unrouted')) {
        setTimeout(() => void s.forwarder.pump(endpoint), 0);
      }
    },

    // The creator of a group session authenticated on it: the connection bound to the group gets
    // the group's traffic from every node (its presence counts), without a register
    // (docs/wmp-profile.md, "Group sessions"). Nothing was routed on the group before (a pending
    // session takes no messages): no pump.
    authenticated(session, identity, connection) {
      s.ops.event('session.opened', { kind: kindOf(session), scheme: schemeOf(identity) });
      if (!isGroupSession(session)) return;
      if (s.presence.ensure(identity, connection, 0, true) === undefined) {
        s.logger.warn('relay.group_unrouted', { reason: 'connections per identity' });
      }
    },

    // A participant joined a group session: what the queue holds for that group goes to this
    // connection now, in order, after the join answer (docs/architecture.md, "Group sessions"),
    // without waiting for a register.
    joined(session, identity, connection) {
      if (!isGroupSession(session)) return;
      const endpoint = s.presence.ensure(identity, connection, 0, true);
      if (endpoint === undefined) {
        s.logger.warn('relay.join_unrouted', { reason: 'connections per identity' });
        return;
      }
      s.forwarder.rewind(endpoint, session.id);
      setTimeout(() => void s.forwarder.pump(endpoint), 0);
    },

    /**
     * A notification the relay refused (it cannot be answered): counted by code for /metrics,
     * logged once per cause per interval, and a deliver's sender is told `dropped` with the
     * reason when its session takes statuses (core §5.3.1), on the connection that sent it.
     */
    /** An unexpected failure (answered -32603): its kind, once per cause per interval. */
    handlerFailed(method, error) {
      const kind = (error as { code?: unknown }).code ?? (error as Error)?.name ?? 'unknown';
      s.refusals.note(`internal_error:${method}:${String(kind)}`);
    },

    notificationRefused(method, error, connection, session, message) {
      s.metrics.error(error.code);
      s.refusals.note(`notification_${error.code}`);
      if (method !== 'wmp.message.deliver' || session === undefined || !wantsStatuses(session)) return;
      if (!connection.sessions.has(session.id) || connection.peer.closed) return;
      // Each answer costs the sender a request: a flood of bad notifications earns no flood back.
      const reason = (error.data as { reason?: unknown } | undefined)?.reason;
      void s.limiters
        .chargeRequests(connection.sessions.get(session.id)?.identity, connection, s.refusals)
        .then(() =>
          connection.peer.notify(
            STATUS_METHOD,
            {
              wmp: metaFor(session.id, session.version),
              // The id the sender chose, when it chose one: else one it never saw (it sent none).
              message_id: refusedMessageId(message.params) ?? newMessageId(),
              status: 'dropped',
              reason: typeof reason === 'string' ? reason : error.message,
            },
            session.id,
          ),
        )
        .catch(() => undefined);
    },

    connectionClosed(connection) {
      s.presence.connectionClosed(connection);
    },

    requestRefused(method, error) {
      if (!refusesAuthentication(method, error)) return;
      s.ops.event('auth.refused', { method, code: error.code, reason: reasonOf(error) });
    },

    sessionEnded(session) {
      // A session nobody authenticated on was never opened (a stranger's create): no line for it.
      if (session.authenticated.length > 0) s.ops.event('session.closed', { kind: kindOf(session) });
      s.presence.dropSession(session.id);
      if (isGroupSession(session)) {
        s.groups.delete(session.id).catch((e: unknown) => {
          s.logger.warn('relay.group_delete_failed', { error: (e as { code?: string }).code ?? 'unknown' });
        });
      }
    },
  };
}
