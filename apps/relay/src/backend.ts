// The one place that chooses where a relay keeps its state: memory (--ephemeral), SQLite in the
// data directory (one process), or PostgreSQL + Redis (one node of a cluster). The app and its
// tests open a backend only through here.
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  type Coordination,
  type Logger,
  MemoryRelayStores,
  type RelayStoreLimits,
  type RelayStores,
  relayStoreLimits,
} from '@wmp/relay-server/node';
import type { AppConfig } from './config.js';
import { IDENTITY_FILE, loadOrCreateIdentity, prepareDatabaseFile, readRelayKeyFile } from './identity.js';
import { applyRotation, readRotation } from './key-rotation.js';

export interface RelayBackend {
  /** `memory`, `sqlite:<file>` or `postgres` (never the URL: it may hold a password). */
  readonly name: string;
  /** The relay key; undefined: a fresh one (memory). */
  readonly seed: Uint8Array | undefined;
  /** The file the key was read from (its rotation record sits beside it); undefined for WMP_RELAY_KEY or memory. */
  readonly keyFile?: string | undefined;
  /** What `createRelay` takes as `store`. */
  readonly store: (limits: RelayStoreLimits) => RelayStores;
  /** The cluster's coordination; undefined: the relay's own, in memory. */
  readonly coordination: Coordination | undefined;
  /** Closes what the relay does not own (the coordination): call it after the relay closed. */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** The data directory, resolved. */
  readonly dataDir: string;
  readonly nodeId: string;
  readonly logger: Logger;
}

/** A node id nobody configured: unique enough in one cluster (two processes on one host differ by pid). */
export function defaultNodeId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 48) || 'node';
  return `${host}-${process.pid}`;
}

/** The box's store limits as the app's settings give them (the rest are the box app's own). */
export function boxStoreLimits(config: AppConfig) {
  const { maxEventBytes: _size, requestsPerSecond: _rate, requestBurst: _burst, ...limits } = config.box;
  return { directory: config.directory, ...limits };
}

/** Opens the backend `config` asks for; rejects as the store or coordination does (see startup-errors.ts). */
export async function openBackend(config: AppConfig, options: BackendOptions): Promise<RelayBackend> {
  if (config.cluster !== undefined) return openCluster(config, config.cluster, options);
  const box = boxStoreLimits(config);
  if (config.ephemeral) {
    // Nothing on disk: a fresh key every start (createRelay's default), memory stores.
    return {
      name: 'memory',
      seed: undefined,
      store: (limits) => new MemoryRelayStores({ ...limits, box }),
      coordination: undefined,
      close: async () => {},
    };
  }
  const keyFile = keyFileOf(config, options);
  const seed = relayKey(config, options.logger) ?? dataDirKey(options);
  const path = prepareDatabaseFile(options.dataDir);
  // The SQLite driver is loaded only for a node that uses it (a cluster node may lack the addon).
  const { SqliteStore } = await import('@wmp/relay-server/sqlite');
  return {
    name: `sqlite:${path}`,
    seed,
    keyFile,
    // Exclusive: a second wmp-relay on the same data directory refuses to start (StoreLockedError).
    store: (limits) => SqliteStore.open({ path, ...limits, box, exclusive: true }),
    coordination: undefined,
    close: async () => {},
  };
}

/** The key file of this relay: --relay-key-file, else the data directory's (undefined: WMP_RELAY_KEY, memory). */
function keyFileOf(config: AppConfig, options: BackendOptions): string | undefined {
  const source = config.relayKey;
  if (source !== undefined) return 'file' in source ? source.file : undefined;
  return config.ephemeral || config.cluster !== undefined ? undefined : join(options.dataDir, IDENTITY_FILE);
}

/** A rotation whose switch time has passed takes effect before the key is read (docs/decisions/0532). */
function rotate(file: string, logger: Logger): void {
  const before = existsSync(file) ? readRotation(file)?.state : undefined;
  if (before === undefined) return;
  const after = applyRotation(file);
  if (after?.state === 'switched' && before === 'announced') {
    logger.info('relay.key_rotated', {
      relay_id: after.statement.next_relay_id,
      previous_relay_id: after.statement.relay_id,
    });
  }
}

function relayKey(config: AppConfig, logger: Logger): Uint8Array | undefined {
  const source = config.relayKey;
  if (source === undefined) return undefined;
  if ('seed' in source) return source.seed;
  rotate(source.file, logger);
  return readRelayKeyFile(source.file);
}

function dataDirKey(options: BackendOptions): Uint8Array {
  rotate(join(options.dataDir, IDENTITY_FILE), options.logger);
  const identity = loadOrCreateIdentity(options.dataDir);
  if (identity.created) options.logger.info('relay.key_created', { file: identity.path });
  if (identity.tooOpen) options.logger.warn('relay.key_permissions', { file: identity.path, expected: '0600' });
  return identity.seed;
}

async function openCluster(
  config: AppConfig,
  cluster: NonNullable<AppConfig['cluster']>,
  options: BackendOptions,
): Promise<RelayBackend> {
  const seed = relayKey(config, options.logger);
  const keyFile = keyFileOf(config, options);
  const [{ PostgresStore, postgresBoxStore }, { connectRedisCoordination }] = await Promise.all([
    import('@wmp/relay-server/postgres'),
    import('@wmp/relay-server/redis'),
  ]);
  const coordination = await connectRedisCoordination({
    url: cluster.redisUrl,
    nodeId: options.nodeId,
    logger: options.logger,
  });
  let stores: RelayStores;
  try {
    stores = await PostgresStore.open({
      url: cluster.databaseUrl,
      applicationName: `wmp-relay:${options.nodeId}`,
      ...relayStoreLimits({ limits: config.limits, timings: config.timings }),
      box: boxStoreLimits(config),
      boxStore: postgresBoxStore,
    });
  } catch (error) {
    await coordination.close().catch(() => undefined);
    throw error;
  }
  return {
    name: 'postgres',
    seed,
    keyFile,
    // Opened already (PostgreSQL connects asynchronously) with the same limits the relay asks for.
    store: () => stores,
    coordination,
    close: () => coordination.close(),
  };
}
