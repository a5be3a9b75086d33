// Wires the app's configuration to the relay library: stores, the relay key, the OHAN box under
// /ohan/v1, listening, and an ordered shutdown. main.ts adds argv, signals and exit codes.
import { isAbsolute, resolve } from 'node:path';
import {
  BOX_API_PREFIX,
  type BoxApp,
  createBoxApp,
  createRelay,
  DEFAULT_RATE_LIMIT,
  type Logger,
  mountBoxApp,
  type Relay,
  sourceRateOf,
} from '@wmp/relay-server/node';
import type { DocumentFetch } from '@wmp/session';
import { createGuardedFetcher } from '@wmp/session/node';
import { OPERATIONS } from './admin/admin-operations.js';
import { type AdminServer, startAdminServer } from './admin/admin-socket.js';
import { loadAssertionPolicy } from './assertion-policy.js';
import { loadAuth, readPemFlag } from './auth.js';
import { defaultNodeId, openBackend } from './backend.js';
import type { AppConfig } from './config.js';
import { serveDemoPage } from './demo-page.js';
import { extendEndpoints } from './endpoints.js';
import { loadEvidence } from './evidence-settings.js';
import { rotationReader } from './key-rotation.js';
import { loadRegistered } from './registered.js';
import { RELAY_VERSION } from './version.js';

export interface RunningRelay {
  /** The public origin (what the relay prints, signs relay_chain entries with and the box checks). */
  readonly url: string;
  readonly port: number;
  readonly relay: Relay;
  /** The relay's did:key. */
  readonly id: string;
  /** `sqlite:<file>`, `postgres` or `memory`. */
  readonly store: string;
  /** This node's id (logs, metrics, `/health`). */
  readonly nodeId: string;
  /**
   * Graceful stop: the box's streams and sweeper, then the relay (stop accepting, close WebSocket
   * connections and SSE streams, commit queued writes, close the database). Idempotent.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  readonly logger: Logger;
  /** This node's id when `config.nodeId` is not set (default: hostname and pid). */
  readonly nodeId?: string;
  /** Where a relative `dataDir` is resolved (default `process.cwd()`). */
  readonly cwd?: string;
  /**
   * What the relay fetches on a client's behalf with for identity assertions (https issuers'
   * keys, status lists) and `wmp.resolve` (`issuer_metadata`, `vctm`, other domains' `endpoint`):
   * default the guarded fetcher (https only, no private addresses unless `--allow-private-peers`).
   */
  readonly fetch?: DocumentFetch;
}

/** Starts a relay as `wmp-relay` does, and resolves once it listens. */
export async function startRelayApp(config: AppConfig, options: StartOptions): Promise<RunningRelay> {
  const { logger } = options;
  const dataDir = isAbsolute(config.dataDir) ? config.dataDir : resolve(options.cwd ?? process.cwd(), config.dataDir);
  const { maxEventBytes, requestsPerSecond, requestBurst } = config.box;
  const nodeId = config.nodeId ?? options.nodeId ?? defaultNodeId();
  // Trust anchors, TLS and did:web (read before anything is opened: a bad file stops the start).
  const cwd = options.cwd ?? process.cwd();
  const highAssurance = readPemFlag('high-assurance-anchors', config.registered.highAssuranceAnchorsFile, cwd);
  const auth = await loadAuth(config.auth, cwd, highAssurance);
  // Issuers' keys, status lists and resolve's documents come through the one guarded fetcher.
  const fetch = options.fetch ?? createGuardedFetcher({ allowPrivate: config.auth?.allowPrivatePeers ?? false }).fetch;
  const registered = await loadRegistered(
    config.registered,
    { trustAnchors: readPemFlag('trust-anchors', config.auth?.trustAnchorsFile, cwd), highAssurance },
    fetch,
  );
  const identityAssertions =
    config.assertionPolicyFile === undefined
      ? undefined
      : loadAssertionPolicy(config.assertionPolicyFile, options.cwd ?? process.cwd(), fetch);
  // The TSA's anchors (read before anything is opened: a bad file stops the start).
  const evidence = loadEvidence(config.evidence, options.cwd ?? process.cwd());
  const backend = await openBackend(config, { dataDir, nodeId, logger });

  // The box is made once the origin is known (with --port 0 only after listening); until then
  // (never in practice: it is made in the same tick) its routes answer 503.
  let boxApp: BoxApp | undefined;
  let boxFetch: ((request: Request, env: unknown) => Response | Promise<Response>) | undefined;

  let relay: Relay;
  try {
    relay = createRelay({
      ...auth,
      ...(backend.seed ? { identity: { seed: backend.seed } } : {}),
      host: config.host,
      port: config.port,
      ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
      store: backend.store,
      ...(backend.coordination ? { coordination: backend.coordination } : {}),
      nodeId,
      limits: config.limits,
      timings: config.timings,
      limitLoopback: config.limitLoopback,
      httpSessionIdBinding: config.httpSessionIdBinding,
      trustedProxies: config.trustedProxies,
      federation: config.federation,
      registered,
      evidence,
      relayChainSignatures: config.evidence.relayChainSignatures,
      ...(identityAssertions ? { identityAssertions } : {}),
      resolve: { fetch },
      logger,
    });
  } catch (error) {
    await backend.close().catch(() => undefined);
    throw error;
  }
  const stop = async () => {
    await relay.close().catch(() => undefined);
    await backend.close().catch(() => undefined);
  };
  const unavailable = () =>
    new Response(JSON.stringify({ error: { code: 'unavailable', message: 'Box not ready' } }), {
      status: 503,
      headers: { 'Content-Type': 'application/json' },
    });
  relay.app.all(`${BOX_API_PREFIX}/*`, (c) => (boxFetch ? boxFetch(c.req.raw, c.env) : unavailable()));
  if (config.demo) {
    try {
      serveDemoPage(relay);
    } catch (error) {
      await stop();
      throw error;
    }
  }
  extendEndpoints(relay, {
    version: RELAY_VERSION,
    boxMetrics: async () => (boxApp ? boxApp.metricsText() : ''),
    ...(backend.keyFile === undefined ? {} : { rotation: rotationReader(backend.keyFile) }),
  });

  let port: number;
  try {
    ({ port } = await relay.listen());
  } catch (error) {
    await stop();
    throw error;
  }
  const url = config.publicUrl ?? `${auth.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  // The listening address (0.0.0.0 in a container) is no public origin: use the configured one.
  relay.core.origin = url;
  const { coordination, stores } = relay.core;
  const sweepLock = stores.withSweepLock;
  const keyRate = {
    perSecond: requestsPerSecond ?? DEFAULT_RATE_LIMIT.perSecond,
    burst: requestBurst ?? DEFAULT_RATE_LIMIT.burst,
    maxKeys: DEFAULT_RATE_LIMIT.maxKeys,
  };
  try {
    boxApp = createBoxApp({
      store: relay.stores.box,
      origin: url,
      directory: config.directory,
      ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
      rateLimit: {
        ...(requestsPerSecond === undefined ? {} : { perSecond: requestsPerSecond }),
        ...(requestBurst === undefined ? {} : { burst: requestBurst }),
      },
      // What a cluster's nodes share (a node's own, in memory, otherwise): a signed request
      // replayed on another node is refused, and the rate windows and stream wake-ups span them.
      nonces: coordination.nonces,
      limiter: coordination.rateLimiter('box', keyRate),
      // Per source too, on every route, as the WMP side limits sources (behind --trusted-proxies;
      // loopback only with --limit-loopback): a client with a fresh key per request is still one.
      sourceOf: (c) => relay.requestSource(c),
      sourceLimiter: coordination.rateLimiter('box-by-source', sourceRateOf(keyRate)),
      wakeUps: coordination.boxWakeUps,
      ...(sweepLock === undefined
        ? {}
        : { sweepLock: async (sweep) => void (await sweepLock.call(stores, 'box', sweep)) }),
      bodyBudget: relay.core.budgets.bodies,
      outboundBudget: relay.core.budgets.outbound,
      bodyTimeoutMs: relay.core.config.timings.bodyTimeoutMs,
      // Only the error's kind: never request contents or addresses.
      onError: (error) => logger.error('box.error', { error: (error as Error)?.name ?? 'unknown' }),
      // Route and status only (no key, address or content), at debug.
      onRequest: (route, status) => relay.core.ops.event('box.request', { route, status }),
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const mounted = mountBoxApp(boxApp);
  boxFetch = (request, env) => mounted.fetch(request, env);

  // The admin socket of a relay on a data directory (a cluster's admin reads the database).
  let admin: AdminServer | undefined;
  if (backend.name.startsWith('sqlite:')) {
    const stores = relay.stores as typeof relay.stores & { backup?: (file: string) => Promise<void> };
    try {
      admin = await startAdminServer(
        dataDir,
        {
          stores,
          ...(stores.backup ? { backup: (file: string) => stores.backup!(file) } : {}),
          live: {
            closeSession: async (id) => {
              if ((await stores.sessions.get(id)) === undefined) return false;
              await relay.server.closeSession(id);
              return true;
            },
            sweep: () => relay.core.sweeper.run(),
          },
          info: { relay_id: relay.id, node_id: nodeId, version: RELAY_VERSION, store: backend.name, url },
        },
        OPERATIONS,
        logger,
      );
    } catch (error) {
      // A relay without its admin socket still serves: the admin commands then say so.
      logger.warn('admin.socket_failed', { code: (error as NodeJS.ErrnoException).code ?? 'unknown' });
    }
  }

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    relay,
    id: relay.id,
    store: backend.name,
    nodeId,
    close() {
      closed ??= (async () => {
        await admin?.close();
        await boxApp?.close();
        await relay.close();
        // The coordination last: the relay's stop withdraws its presence through it.
        await backend.close();
      })();
      return closed;
    },
  };
}
