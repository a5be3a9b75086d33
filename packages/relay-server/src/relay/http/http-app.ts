import type { Keypair } from '@wmp/jcs-signing';
import { OHAN_API_PATH } from '@wmp/ohan-seal';
import type { WmpServer } from '@wmp/session';
import type { SourceReadRate } from '@wmp/transports';
import type { Context, Hono } from 'hono';
import { Hono as HonoApp } from 'hono';
import type { Coordination } from '../../coordination/contracts/coordination.js';
import type { RelayStores } from '../../storage/contracts/relay-stores.js';
import type { ResolvedEvidenceConfig } from '../evidence/evidence-config.js';
import { evidenceCapability } from '../evidence/evidence-policy.js';
import type { Federation } from '../federation/federation.js';
import { renderFederationMetrics } from '../federation/federation-metrics.js';
import type { Presence } from '../presence/presence.js';
import type { RelayBudgets } from '../support/budgets.js';
import type { ResolvedConfig } from '../support/limits.js';
import type { Logger } from '../support/logger.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { RefusalLog } from '../support/refusals.js';
import { createEvidenceApp, EVIDENCE_PATH } from './evidence-api.js';
import { wellKnownConfiguration } from './well-known.js';

/** A hono sub-app (or a factory of one) served under `/ohan/v1`: the OHAN box API. */
export type BoxAppInput = Hono | ((stores: RelayStores) => Hono);

/** What the HTTP app reads of the relay's engine (`RelayCore` is one): documents, health, gauges. */
export interface RelayAppCore {
  /** The public origin (known once the relay listens). */
  readonly origin: string;
  readonly identity: Keypair;
  readonly config: ResolvedConfig;
  readonly server: Pick<WmpServer, 'acceptedSchemes' | 'connectionCounts'>;
  readonly stores: RelayStores;
  readonly coordination: Pick<Coordination, 'health' | 'nodeId' | 'nonces' | 'rateLimiter'>;
  readonly evidenceConfig: ResolvedEvidenceConfig;
  readonly federation: Pick<Federation, 'peersDown' | 'peerGauges' | 'metrics'> | undefined;
  readonly presence: Pick<Presence, 'size'>;
  /** A cluster node's session cache, for its gauges. */
  readonly sessionCache: { readonly size: number; readonly hits: number; readonly misses: number } | undefined;
  readonly metrics: Pick<RelayMetrics, 'render'>;
  readonly budgets: RelayBudgets;
  readonly readRate: Pick<SourceReadRate, 'waits'>;
  readonly refusals: Pick<RefusalLog, 'totals'>;
  readonly logger: Logger;
  /** Open connections (WebSocket connections and HTTP sessions). */
  readonly connections: number;
}

export interface RelayAppInput {
  readonly core: RelayAppCore;
  /** The HTTP binding's app (routes at `/wmp`, `/wmp/events`). */
  readonly binding: Hono;
  readonly box?: BoxAppInput | undefined;
  readonly keyPackages?: readonly Record<string, unknown>[] | undefined;
  readonly privacy?: Readonly<Record<string, string>> | undefined;
  readonly erds?: Readonly<Record<string, unknown>> | undefined;
  readonly recipientMetadata?: Readonly<Record<string, unknown>> | undefined;
  readonly maxQueued: number;
  /** The client address a request is limited by (the evidence repository's per-source rate). */
  readonly sourceOf: (c: Context) => string | undefined;
  /** Whether the relay is shutting down (health answers 503 then). */
  closing(): boolean;
}

/** Reads of the evidence repository per signing key, and per source (they are signed and cheap). */
const EVIDENCE_RATE = { perSecond: 5, burst: 30 } as const;

const PROMETHEUS = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Everything on the relay's one port but the WebSocket upgrade: the HTTP binding, the well-known
 * documents, health, metrics and, when given, the OHAN box under `/ohan/v1`.
 */
export function createRelayApp(input: RelayAppInput): Hono {
  const { core } = input;
  const app = new HonoApp();
  // Hono's default prints the error with its stack to stderr: one line of JSON instead, with the
  // error's name only (never a message that could hold input), and a bare 500.
  app.onError((error) => {
    core.logger.error('http.error', { error: (error as Error)?.name ?? 'unknown' });
    return new Response(null, { status: 500 });
  });

  app.get('/.well-known/wmp-configuration', (c) =>
    c.json(
      wellKnownConfiguration({
        origin: core.origin,
        identity: core.identity,
        limits: core.config.limits,
        timings: core.config.timings,
        maxQueued: input.maxQueued,
        acceptedSchemes: core.server.acceptedSchemes,
        ...(input.privacy ? { privacy: input.privacy } : {}),
        ...(input.erds ? { erds: input.erds } : {}),
        ...(input.recipientMetadata ? { recipientMetadata: input.recipientMetadata } : {}),
        ...(core.evidenceConfig.enabled
          ? { evidence: evidenceCapability(core.evidenceConfig, () => core.origin) }
          : {}),
      }),
      200,
      { 'Cache-Control': 'public, max-age=300' },
    ),
  );

  // Only the relay's own key packages (docs/architecture.md, "Group sessions"): participants' ones
  // are handed out by method.
  app.get('/.well-known/mls-key-packages', (c) => c.json({ key_packages: input.keyPackages ?? [] }));

  // Whether the relay serves, and whether something stops new users (a full session store, no
  // free connection slots) or a cluster's coordination is down: those are `degraded`, still 200,
  // so a load balancer keeps the node.
  app.get('/health', async (c) => {
    let store = 'ok';
    let sessions = 'ok';
    try {
      await core.stores.queue.totals();
      const counts = await core.stores.sessions.counts();
      const caps = core.stores.sessions.limits;
      if (counts.sessions >= caps.maxSessions || counts.pending >= caps.maxPendingSessions) sessions = 'full';
    } catch {
      store = 'error';
    }
    const { limits } = core.config;
    const open = core.server.connectionCounts;
    const connections =
      open.open >= limits.maxConnections || open.unauthenticated >= limits.maxUnauthenticatedConnections
        ? 'full'
        : 'ok';
    // Redis down: what needs only the database still works (docs/architecture.md, "Coordination"),
    // so the node stays in.
    const coordination = core.coordination.health();
    const ok = store === 'ok' && !input.closing();
    const status = !ok
      ? 'unavailable'
      : sessions === 'ok' && connections === 'ok' && coordination === 'ok'
        ? 'ok'
        : 'degraded';
    return c.json(
      {
        status,
        store,
        sessions,
        connections,
        coordination,
        closing: input.closing(),
        relay_id: core.identity.did,
        node_id: core.coordination.nodeId,
        // Peer relays whose link is down (their outboxes wait); by origin, never a user's address.
        ...(core.federation ? { peers_down: core.federation.peersDown() } : {}),
      },
      ok ? 200 : 503,
    );
  });

  app.get('/metrics', async (c) => {
    const text = await core.metrics.render({
      connections: () => core.connections,
      unauthenticated: () => core.server.connectionCounts.unauthenticated,
      sessions: () => core.stores.sessions.counts(),
      registered: () => core.presence.size,
      queue: () => core.stores.queue.totals(),
      budgets: () => ({ ...core.budgets }),
      readWaits: () => core.readRate.waits,
      refusals: () => core.refusals.totals,
      nodeId: () => core.coordination.nodeId,
      coordinationUp: () => core.coordination.health() === 'ok',
      sessionCache: () => core.sessionCache,
    });
    const federation = core.federation ? await renderFederationMetrics(core.federation) : '';
    return c.body(text + federation, 200, { 'Content-Type': PROMETHEUS });
  });

  // The evidence repository (wmp-tables §9), served to the parties of each message.
  app.route(
    EVIDENCE_PATH,
    createEvidenceApp({
      store: core.stores.evidence,
      origin: () => core.origin,
      nonces: core.coordination.nonces,
      perKey: core.coordination.rateLimiter('evidence', { ...EVIDENCE_RATE, maxKeys: 100_000 }),
      perSource: core.coordination.rateLimiter('evidence-by-source', {
        perSecond: EVIDENCE_RATE.perSecond * 4,
        burst: EVIDENCE_RATE.burst * 4,
        maxKeys: 100_000,
      }),
      sourceOf: input.sourceOf,
      logger: core.logger,
      now: Date.now,
    }),
  );

  if (input.box) {
    const box = typeof input.box === 'function' ? input.box(core.stores) : input.box;
    app.route(OHAN_API_PATH, box);
  }
  app.route('/', input.binding);
  return app;
}
