import type { Logger } from '../../relay/support/logger.js';
import type { Coordination, CoordinationHealth, CoordinationLimits } from '../contracts/coordination.js';
import { CoordinationUnavailableError } from '../contracts/errors.js';
import {
  DEFAULT_KEY_PACKAGE_BUDGET_NAME,
  type KeyPackageBudgetOptions,
  type KeyPackageBudgets,
} from '../contracts/key-package-budgets.js';
import type { RateLimiter, TokenBucketOptions } from '../contracts/rate-limiter.js';
import { DEFAULT_STATUS_CLAIMS_MAX_ENTRIES } from '../contracts/replay-cache.js';
import { MAX_NODE_NOTE_CHARS, type WakeUpLimits } from '../contracts/wake-ups.js';
import { RedisKeyPackageBudgets } from './key-package-budgets.js';
import { RedisKeys } from './keys.js';
import { type LinkOptions, RedisLink } from './link.js';
import { RedisPresenceDirectory } from './presence-directory.js';
import { DEFAULT_COUNT_GRANULARITY_MS, RedisReplayCache } from './replay-cache.js';
import { ANNOUNCE, LEASE, NODES, REFUND, RESERVE, USE_ONCE } from './scripts.js';
import { RedisTokenBuckets } from './token-buckets.js';
import { RedisWakeUps } from './wake-ups.js';

export interface RedisCoordinationOptions extends LinkOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://...` (TLS). */
  readonly url: string;
  /** This node's id: unique in the cluster (the relay's default is hostname + pid). */
  readonly nodeId: string;
  /** Prefix of every key and channel; default `wmp:`. */
  readonly prefix?: string;
  readonly limits?: CoordinationLimits;
  /**
   * How long to wait for Redis at start (ms; default 5000), after which `connectRedisCoordination`
   * rejects with `CoordinationUnavailableError`; `false` starts at once, degraded, and connects in
   * the background.
   */
  readonly waitForReady?: number | false;
  /** Expiry buckets of the nonce and replay totals (ms); default 1000. */
  readonly countGranularityMs?: number;
  readonly logger?: Logger;
}

const SCRIPTS = [LEASE, RESERVE, REFUND, USE_ONCE, ANNOUNCE, NODES];

/**
 * The cluster's coordination on one Redis (7.0 or later; persistence not needed, everything in it
 * is a hint or has a TTL). Two connections per node. See `Coordination` for what each part does
 * and `RedisCoordination.health()` for what an outage changes.
 */
export class RedisCoordination implements Coordination {
  readonly nodeId: string;
  readonly nonces: RedisReplayCache;
  readonly replays: RedisReplayCache;
  readonly statusClaims: RedisReplayCache;
  readonly presence: RedisPresenceDirectory;
  readonly wakeUps: RedisWakeUps;
  readonly boxWakeUps: RedisWakeUps;
  readonly nodes: RedisWakeUps;
  readonly broadcast: RedisWakeUps;
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #limiters = new Map<string, RedisTokenBuckets>();
  readonly #budgets = new Map<string, RedisKeyPackageBudgets>();
  #closed = false;

  /** @internal Use `connectRedisCoordination`. */
  constructor(link: RedisLink, options: RedisCoordinationOptions) {
    this.#link = link;
    this.#keys = new RedisKeys(options.prefix);
    this.nodeId = options.nodeId;
    const granularity = options.countGranularityMs ?? DEFAULT_COUNT_GRANULARITY_MS;
    const limits = options.limits ?? {};
    const logger = options.logger;
    const onError = (error: unknown) =>
      logger?.error('coordination.handler_failed', { error: error instanceof Error ? error.name : 'unknown' });
    const wakeOptions = (l: WakeUpLimits | undefined) => ({ ...(l === undefined ? {} : { limits: l }), onError });
    // Loaded at start and first on every reconnect, so the scripts below rarely meet NOSCRIPT.
    link.onReady('commands', () => loadScripts(link));
    loadScripts(link);
    this.nonces = new RedisReplayCache(link, this.#keys, 'nonce', limits.nonces, granularity);
    this.replays = new RedisReplayCache(link, this.#keys, 'replay', limits.replays, granularity);
    const statusClaims = { maxEntries: DEFAULT_STATUS_CLAIMS_MAX_ENTRIES, ...limits.statusClaims };
    this.statusClaims = new RedisReplayCache(link, this.#keys, 'status', statusClaims, granularity);
    this.presence = new RedisPresenceDirectory(link, this.#keys);
    this.wakeUps = new RedisWakeUps(link, this.#keys, 'wake', wakeOptions(limits.wakeUps));
    this.boxWakeUps = new RedisWakeUps(link, this.#keys, 'box', wakeOptions(limits.boxWakeUps ?? limits.wakeUps));
    this.nodes = new RedisWakeUps(link, this.#keys, 'node', { onError, maxNoteChars: MAX_NODE_NOTE_CHARS });
    this.broadcast = new RedisWakeUps(link, this.#keys, 'all', { onError });
  }

  rateLimiter(name: string, options: TokenBucketOptions): RateLimiter {
    let limiter = this.#limiters.get(name);
    if (limiter === undefined) {
      limiter = new RedisTokenBuckets(this.#link, this.#keys, name, options);
      this.#limiters.set(name, limiter);
    }
    return limiter;
  }

  keyPackageBudgets(options: KeyPackageBudgetOptions): KeyPackageBudgets {
    const name = options.name ?? DEFAULT_KEY_PACKAGE_BUDGET_NAME;
    let budgets = this.#budgets.get(name);
    if (budgets === undefined) {
      budgets = new RedisKeyPackageBudgets(this.#link, this.#keys, options);
      this.#budgets.set(name, budgets);
    }
    return budgets;
  }

  /**
   * `degraded` while either connection is down or commands fail for want of the server (until
   * the next answer or PING). Meanwhile: `useOnce` of `nonces`, `replays` and `statusClaims`
   * rejects with `ReplayCacheUnavailableError` (the box answers 503, DPoP -31007), `nodesOf` with
   * `CoordinationUnavailableError`; rate limits and budgets count per node; announce, withdraw,
   * publish and subscribe resolve and catch up after reconnect.
   */
  health(): CoordinationHealth {
    return this.#link.health();
  }

  onHealth(listener: (health: CoordinationHealth) => void): () => void {
    return this.#link.onHealth(listener);
  }

  /** Takes answered by local fallbacks since start (rate limits and budgets), for metrics. */
  get fallbacks(): number {
    let n = 0;
    for (const l of this.#limiters.values()) n += l.fallbacks;
    for (const b of this.#budgets.values()) n += b.fallbacks;
    return n;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([
      this.presence.close(),
      this.wakeUps.close(),
      this.boxWakeUps.close(),
      this.nodes.close(),
      this.broadcast.close(),
    ]);
    await this.#link.close();
  }

  /** Drops both connections at once without withdrawing anything, as if the node died (tests). */
  crash(): void {
    this.#closed = true;
    this.presence.stop();
    this.#link.destroy();
  }
}

function loadScripts(link: RedisLink): void {
  if (!link.usable) return;
  for (const s of SCRIPTS) link.call((c) => c.scriptLoad(s.source)).catch(() => {});
}

/**
 * Connects a node to Redis. Rejects with `TypeError` for a URL that is not `redis:` / `rediss:`
 * (the message never repeats the URL: it may hold a password), and with
 * `CoordinationUnavailableError` when Redis does not answer within `waitForReady`.
 */
export async function connectRedisCoordination(options: RedisCoordinationOptions): Promise<RedisCoordination> {
  let protocol: string;
  try {
    protocol = new URL(options.url).protocol;
  } catch {
    throw new TypeError('the Redis URL does not parse');
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:')
    throw new TypeError('the Redis URL must be redis:// or rediss://');
  if (options.nodeId === '') throw new TypeError('nodeId must not be empty');
  const link = new RedisLink({ clientName: `wmp:${options.nodeId}`, ...options });
  const wait = options.waitForReady ?? 5000;
  if (wait === false) {
    const coordination = new RedisCoordination(link, options);
    link.startInBackground();
    return coordination;
  }
  try {
    await link.start(wait);
  } catch (error) {
    throw new CoordinationUnavailableError({ cause: error });
  }
  return new RedisCoordination(link, options);
}
