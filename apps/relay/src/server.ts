// Wires the app's configuration to the relay library: stores, the relay key, the OHAN box under
// /ohan/v1, listening, and an ordered shutdown. main.ts adds argv, signals and exit codes.
import { isAbsolute, resolve } from 'node:path';
import {
  BOX_API_PREFIX,
  type BoxApp,
  createBoxApp,
  createRelay,
  type Logger,
  MemoryRelayStores,
  mountBoxApp,
  type Relay,
  type RelayStoreLimits,
  type RelayStores,
} from '@wmp/relay-server/node';
import { SqliteStore } from '@wmp/relay-server/sqlite';
import type { AppConfig } from './config.js';
import { loadOrCreateIdentity, prepareDatabaseFile } from './identity.js';

export interface RunningRelay {
  /** The public origin (what the relay prints, signs relay_chain entries with and the box checks). */
  readonly url: string;
  readonly port: number;
  readonly relay: Relay;
  /** The relay's did:key. */
  readonly id: string;
  /** `sqlite` with its file, or `memory`. */
  readonly store: string;
  /**
   * Graceful stop: the box's streams and sweeper, then the relay (stop accepting, close WebSocket
   * connections and SSE streams, commit queued writes, close the database). Idempotent.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  readonly logger: Logger;
  /** Where a relative `dataDir` is resolved (default `process.cwd()`). */
  readonly cwd?: string;
}

/** Starts a relay as `wmp-relay` does, and resolves once it listens. */
export async function startRelayApp(config: AppConfig, options: StartOptions): Promise<RunningRelay> {
  const { logger } = options;
  const dataDir = isAbsolute(config.dataDir) ? config.dataDir : resolve(options.cwd ?? process.cwd(), config.dataDir);
  const { maxEventBytes, requestsPerSecond, requestBurst, ...storeLimits } = config.box;
  const boxLimits = { directory: config.directory, ...storeLimits };

  let seed: Uint8Array | undefined;
  let openStore: (limits: RelayStoreLimits) => RelayStores;
  let storeName: string;
  if (config.ephemeral) {
    // Nothing on disk: a fresh key every start (createRelay's default), memory stores.
    storeName = 'memory';
    openStore = (limits) => new MemoryRelayStores({ ...limits, box: boxLimits });
  } else {
    const identity = loadOrCreateIdentity(dataDir);
    seed = identity.seed;
    if (identity.created) logger.info('relay.key_created', { file: identity.path });
    if (identity.tooOpen) logger.warn('relay.key_permissions', { file: identity.path, expected: '0600' });
    const path = prepareDatabaseFile(dataDir);
    storeName = `sqlite:${path}`;
    // Exclusive: a second wmp-relay on the same data directory refuses to start (StoreLockedError).
    openStore = (limits) => SqliteStore.open({ path, ...limits, box: boxLimits, exclusive: true });
  }

  // The box is made once the origin is known (with --port 0 only after listening); until then
  // (never in practice: it is made in the same tick) its routes answer 503.
  let boxApp: BoxApp | undefined;
  let boxFetch: ((request: Request, env: unknown) => Response | Promise<Response>) | undefined;

  const relay = createRelay({
    ...(seed ? { identity: { seed } } : {}),
    host: config.host,
    port: config.port,
    ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
    store: openStore,
    limits: config.limits,
    timings: config.timings,
    limitLoopback: config.limitLoopback,
    httpSessionIdBinding: config.httpSessionIdBinding,
    logger,
  });
  const unavailable = () =>
    new Response(JSON.stringify({ error: { code: 'unavailable', message: 'Box not ready' } }), {
      status: 503,
      headers: { 'Content-Type': 'application/json' },
    });
  relay.app.all(`${BOX_API_PREFIX}/*`, (c) => (boxFetch ? boxFetch(c.req.raw, c.env) : unavailable()));

  let port: number;
  try {
    ({ port } = await relay.listen());
  } catch (error) {
    await relay.close().catch(() => undefined);
    throw error;
  }
  const url = config.publicUrl ?? `http://127.0.0.1:${port}`;
  // The listening address (0.0.0.0 in a container) is no public origin: use the configured one.
  relay.core.origin = url;
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
      bodyBudget: relay.core.budgets.bodies,
      outboundBudget: relay.core.budgets.outbound,
      bodyTimeoutMs: relay.core.config.timings.bodyTimeoutMs,
      // Only the error's kind: never request contents or addresses.
      onError: (error) => logger.error('box.error', { error: (error as Error)?.name ?? 'unknown' }),
    });
  } catch (error) {
    await relay.close().catch(() => undefined);
    throw error;
  }
  const mounted = mountBoxApp(boxApp);
  boxFetch = (request, env) => mounted.fetch(request, env);

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    relay,
    id: relay.id,
    store: storeName,
    close() {
      closed ??= (async () => {
        await boxApp?.close();
        await relay.close();
      })();
      return closed;
    },
  };
}
