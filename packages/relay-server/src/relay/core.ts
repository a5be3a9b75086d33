import type { Keypair, RelayHop } from '@wmp/jcs-signing';
import { signedChallengeAuthenticator, type Transport, WmpServer } from '@wmp/session';
import type { QueueLimits } from '../storage/contracts/queue-store.js';
import type { RelayStores } from '../storage/contracts/relay-stores.js';
import { MemoryStore } from '../storage/memory/memory-store.js';
import { type RelayConfig, type RelayLimits, type ResolvedConfig, resolveConfig } from './config.js';
import { deliverHook } from './deliver.js';
import { Forwarder } from './forwarder.js';
import { relayHooks } from './hooks.js';
import { relayKeypair } from './identity.js';
import { KeyPackageBudget } from './key-package-budget.js';
import { type Logger, silentLogger } from './logger.js';
import { RelayMetrics } from './metrics.js';
import { ObservedTransport } from './observed-transport.js';
import { Presence } from './presence.js';
import { RateLimiter } from './rate-limit.js';
import { relayMethods } from './relay-methods.js';
import type { RelayServices } from './services.js';
import { StatusNotifier } from './statuses.js';
import { Sweeper } from './sweeper.js';

/** The relay without a network: the session engine with routing, queues and their bookkeeping. */
export interface RelayCore {
  readonly config: ResolvedConfig;
  readonly identity: Keypair;
  readonly stores: RelayStores;
  readonly server: WmpServer;
  readonly services: RelayServices;
  readonly metrics: RelayMetrics;
  readonly sweeper: Sweeper;
  readonly logger: Logger;
  /** Open connections (WebSocket connections and HTTP sessions). */
  readonly connections: number;
  /** Serves one connection of any binding, counting its errors and its end. */
  connect(transport: Transport): Promise<void>;
  /** The public origin used in relay_chain entries and the well-known document. */
  origin: string;
}

/**
 * The stores, with the queue limits of the config. A ready store enforces its own limits, so
 * one that disagrees with limits the config sets explicitly is refused rather than silently
 * winning (pass a factory to have the config's limits applied).
 */
function openStores(input: RelayConfig, limits: RelayLimits): RelayStores {
  const queue = { maxQueued: limits.maxQueued, maxBytes: limits.maxQueueBytes };
  if (typeof input.store === 'function') return input.store(queue);
  if (input.store === undefined) return new MemoryStore({ queue });
  const own = ownQueueLimits(input.store);
  const asked = input.limits ?? {};
  if (
    (asked.maxQueued !== undefined && own?.maxQueued !== undefined && own.maxQueued !== asked.maxQueued) ||
    (asked.maxQueueBytes !== undefined && own?.maxBytes !== undefined && own.maxBytes !== asked.maxQueueBytes)
  ) {
    throw new RangeError('limits.maxQueued / maxQueueBytes differ from the store queue limits');
  }
  return input.store;
}

/** The limits a ready queue store enforces, when it says (both adapters do). */
function ownQueueLimits(stores: RelayStores): Partial<QueueLimits> | undefined {
  return (stores.queue as { limits?: Partial<QueueLimits> }).limits;
}

/**
 * Builds the relay's engine: a `WmpServer` on the relay's stores with the relay hooks and
 * methods, rate limiting per identity, and the expiry sweeper (not started).
 */
export function createRelayCore(input: RelayConfig): RelayCore {
  const config = resolveConfig(input);
  const { limits, timings } = config;
  const now = input.now ?? Date.now;
  const logger = input.logger ?? silentLogger;
  const identity = relayKeypair(input.identity);
  const stores = openStores(input, limits);
  const own = ownQueueLimits(stores);
  const queueLimits = {
    maxQueued: own?.maxQueued ?? limits.maxQueued,
    maxBytes: own?.maxBytes ?? limits.maxQueueBytes,
  };
  const metrics = new RelayMetrics();
  const presence = new Presence(limits.maxConnectionsPerIdentity);
  const forwarder = new Forwarder(stores.queue, presence, metrics, logger, now);
  const statuses = new StatusNotifier(
    presence,
    stores.queue,
    forwarder,
    { relayId: identity.did, ttlMs: timings.messageTtlSeconds * 1000, maxQueued: queueLimits.maxQueued },
    metrics,
    logger,
    now,
  );
  const limiter = new RateLimiter(limits.requestsPerSecond, limits.requestBurst, now);

  let origin = input.publicUrl?.replace(/\/+$/, '') ?? 'http://localhost';
  const hop = (): RelayHop => ({ relay: `${origin}/wmp`, relayId: identity.did, signer: identity });
  let server!: WmpServer;
  const services: RelayServices = {
    config,
    queue: stores.queue,
    queueLimits,
    sessions: stores.sessions,
    keyPackages: stores.keyPackages,
    keyPackageBudget: new KeyPackageBudget(limits.keyPackageFetchesPerTarget, now),
    groups: stores.groups,
    presence,
    forwarder,
    statuses,
    connections: { connectionsOf: (id: string) => server.connectionsOf(id) },
    metrics,
    logger,
    hop,
    now,
  };

  server = new WmpServer({
    store: stores.sessions,
    capabilities: {
      messaging: { max_size: limits.maxMessageBytes },
      relay: { destinations: ['*'] },
      offline: { max_queued: limits.maxQueued, ttl: timings.messageTtlSeconds, status_notifications: true },
    },
    // signed_challenge is always on; configured types (bearer, say) come beside it.
    authenticators: { signed_challenge: signedChallengeAuthenticator(), ...input.authenticators },
    maxSessionsPerConnection: limits.maxSessionsPerConnection,
    maxConnections: limits.maxConnections,
    maxMessageBytes: limits.maxMessageBytes,
    // Throwing here answers -31007 (rate windows stay in memory); `true` lets the call on.
    authorize: (ctx) => {
      limiter.take(ctx.sender ?? `connection:${ctx.connection.id}`);
      return true;
    },
    hooks: { ...relayHooks(services), deliver: deliverHook(services) },
    now,
  });
  for (const [method, handler] of Object.entries(relayMethods(services))) server.handle(method, handler);

  const sweeper = new Sweeper(stores, statuses, timings, logger, now);
  let connections = 0;
  return {
    get origin() {
      return origin;
    },
    set origin(value: string) {
      origin = value;
    },
    config,
    identity,
    stores,
    server,
    services,
    metrics,
    sweeper,
    logger,
    get connections() {
      return connections;
    },
    async connect(transport: Transport): Promise<void> {
      connections++;
      const observed = new ObservedTransport(transport, {
        error: (code) => metrics.error(code),
        closed: () => {
          connections--;
        },
      });
      try {
        await server.connect(observed);
      } catch (e) {
        logger.warn('relay.connection_refused', { error: (e as { code?: number }).code ?? 'unknown' });
        throw e;
      }
    },
  };
}
