import { MemoryReplayCache, type ReplayCache } from '@wmp/jcs-signing';
import { DEFAULT_MAX_EVENT_BYTES, isBoxOrigin, OHAN_API_PATH, OHAN_SKEW_SECONDS } from '@wmp/ohan-seal';
import type { ByteBudget } from '@wmp/transports';
import type { Context } from 'hono';
import type { RateLimiter } from '../coordination/contracts/rate-limiter.js';
import type { WakeUps } from '../coordination/contracts/wake-ups.js';
import type { BoxStore } from '../storage/contracts/box-store.js';

/** Where the relay mounts the box app (@wmp/ohan-seal's `OHAN_API_PATH`): its routes are relative to this. */
export const BOX_API_PREFIX = OHAN_API_PATH;
/** The protocol id `GET /limits` reports. */
export const BOX_PROTOCOL = 'ohan.relay.1';

export interface RateLimitOptions {
  /** Tokens added per second, per key. */
  readonly perSecond: number;
  /** Bucket size: the burst a key may spend at once. */
  readonly burst: number;
  /** Most keys tracked; past it the least recently seen is forgotten (memory stays bounded). */
  readonly maxKeys: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitOptions = Object.freeze({ perSecond: 20, burst: 120, maxKeys: 100_000 });

/** A source (an address: possibly many clients behind one NAT) gets this many times a key's rate. */
export const SOURCE_RATE_FACTOR = 4;

/** `rate` for a source: `SOURCE_RATE_FACTOR` times its rate and burst. */
export function sourceRateOf(rate: RateLimitOptions): RateLimitOptions {
  return {
    perSecond: rate.perSecond * SOURCE_RATE_FACTOR,
    burst: rate.burst * SOURCE_RATE_FACTOR,
    maxKeys: rate.maxKeys,
  };
}

export interface BoxAppOptions {
  readonly store: BoxStore;
  /** The box's public origin, `https://host[:port]` (http only on loopback): what requests are signed for. */
  readonly origin: string;
  /** Directory box (cards routes on, publish needs cards). Must agree with `store.limits.directory`. */
  readonly directory: boolean;
  /** Request nonces: in memory (or Redis), never on disk. Default: a bounded `MemoryReplayCache`. */
  readonly nonces?: ReplayCache;
  /** The box's clock in ms (default `Date.now`): event and request times are judged by it. */
  readonly now?: () => number;
  /** Largest event JSON accepted (default 96 KiB), reported as `max_event_bytes`. */
  readonly maxEventBytes?: number;
  /** Hard cap on a `POST /events` body, read before parsing (default `maxEventBytes`). Over: 413. */
  readonly maxBodyBytes?: number;
  /** Allowed clock skew in seconds (default 300), for events and signed requests. */
  readonly skewSeconds?: number;
  /** Per-key request rate limit (token bucket, in memory); `false` turns it off (benchmarks). */
  readonly rateLimit?: Partial<RateLimitOptions> | false;
  /**
   * The per-key buckets themselves, when the nodes of a cluster share them (the coordination's
   * `rateLimiter('box', ...)`); default: buckets in memory with `rateLimit`'s options.
   */
  readonly limiter?: RateLimiter;
  /**
   * Stream wake-ups: a publish on any node wakes the key's streams on every node (the
   * coordination's `boxWakeUps`); default: this process only.
   */
  readonly wakeUps?: WakeUps;
  /**
   * Runs one expiry sweep, on one node of a cluster at a time (the stores' sweep lock); default:
   * runs it.
   */
  readonly sweepLock?: (sweep: () => Promise<void>) => Promise<void>;
  /**
   * The source of a request as the host knows it (the relay: the client address behind the
   * proxies it trusts; undefined: not limited, e.g. loopback). This app never sees sockets. With
   * it, every route is limited per source too, before any work is done, and the nonces of one
   * source hold only a share of the cache (`ReplayScope.source` of each nonce), so throwaway keys from
   * one place cannot fill it.
   */
  readonly sourceOf?: (c: Context) => string | undefined;
  /** Per-source rate (default `SOURCE_RATE_FACTOR` times `rateLimit`; off when `rateLimit` is). */
  readonly sourceRateLimit?: Partial<RateLimitOptions> | false;
  /** The per-source buckets themselves, shared by a cluster's nodes (`rateLimiter('box-by-source', ...)`). */
  readonly sourceLimiter?: RateLimiter;
  /** Open event streams per key (default 4) and in total (default 10 000). */
  readonly maxStreamsPerKey?: number;
  readonly maxStreams?: number;
  /** Keep-alive comment interval on event streams (default 15 s). */
  readonly keepAliveMs?: number;
  /** Bytes queued for a slow stream reader before the stream is ended (default 4 MiB). */
  readonly maxStreamQueuedBytes?: number;
  /**
   * Expiry sweep interval (default 60 s; 0: the host runs `sweepExpiredEvents` itself). The timer is
   * unref'd and stopped by `close()`.
   */
  readonly sweepIntervalMs?: number;
  /** Called with internal errors (store failures) for the host's logs; never with request contents. */
  readonly onError?: (error: unknown) => void;
  /** Called after each request with its route's name and HTTP status (the host's debug log); nothing else. */
  readonly onRequest?: (route: string, status: number) => void;
  /**
   * Worker threads that check the Ed25519 signatures of published events, so they run on other
   * cores than the event loop (default: one per spare core, at most 4; 0: on the event loop).
   */
  readonly verifyThreads?: number;
  /** Request body bytes being read across the server (the relay's shared budget); none: unbounded. */
  readonly bodyBudget?: ByteBudget;
  /** A request body must arrive within this long (default 30 s), else `unavailable`. */
  readonly bodyTimeoutMs?: number;
  /** Bytes queued to slow event-stream readers across the server (the relay's shared budget). */
  readonly outboundBudget?: ByteBudget;
}

export interface ResolvedBoxOptions {
  readonly store: BoxStore;
  readonly origin: string;
  readonly directory: boolean;
  readonly nonces: ReplayCache;
  readonly now: () => number;
  readonly maxEventBytes: number;
  readonly maxBodyBytes: number;
  readonly skewSeconds: number;
  readonly rateLimit: RateLimitOptions | false;
  readonly limiter: RateLimiter | undefined;
  readonly wakeUps: WakeUps | undefined;
  readonly sweepLock: (sweep: () => Promise<void>) => Promise<void>;
  readonly sourceOf: ((c: Context) => string | undefined) | undefined;
  readonly sourceRateLimit: RateLimitOptions | false;
  readonly sourceLimiter: RateLimiter | undefined;
  readonly maxStreamsPerKey: number;
  readonly maxStreams: number;
  readonly keepAliveMs: number;
  readonly maxStreamQueuedBytes: number;
  readonly sweepIntervalMs: number;
  readonly onError: (error: unknown) => void;
  readonly onRequest: ((route: string, status: number) => void) | undefined;
  /** Undefined: the host's default (the app picks one per spare core). */
  readonly verifyThreads: number | undefined;
  readonly bodyBudget: ByteBudget | undefined;
  readonly bodyTimeoutMs: number;
  readonly outboundBudget: ByteBudget | undefined;
}

function positive(value: number | undefined, fallback: number, what: string, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) throw new RangeError(`${what} must be an integer >= ${min}`);
  return v;
}

function checkRate(rate: RateLimitOptions, what: string): void {
  if (!(rate.perSecond > 0) || !(rate.burst >= 1)) throw new RangeError(`${what} needs perSecond > 0, burst >= 1`);
  positive(rate.maxKeys, 1, `${what}.maxKeys`);
}

/** Checks the configuration once, at construction: a bad value is a startup error, not a runtime one. */
export function resolveBoxOptions(options: BoxAppOptions): ResolvedBoxOptions {
  if (!isBoxOrigin(options.origin)) throw new RangeError('origin must be https://host[:port] (http on loopback)');
  if (options.directory !== options.store.limits.directory) {
    // The routes (cards) and the store's admission rule (not_registered) would disagree.
    throw new RangeError('directory must match the store limits');
  }
  const now = options.now ?? Date.now;
  const maxEventBytes = positive(options.maxEventBytes, DEFAULT_MAX_EVENT_BYTES, 'maxEventBytes', 256);
  const rate = options.rateLimit === false ? false : { ...DEFAULT_RATE_LIMIT, ...options.rateLimit };
  if (rate) checkRate(rate, 'rateLimit');
  const sourceRate =
    options.sourceRateLimit === false || rate === false ? false : { ...sourceRateOf(rate), ...options.sourceRateLimit };
  if (sourceRate) checkRate(sourceRate, 'sourceRateLimit');
  return {
    store: options.store,
    origin: options.origin,
    directory: options.directory,
    nonces: options.nonces ?? new MemoryReplayCache({ now }),
    now,
    maxEventBytes,
    maxBodyBytes: positive(options.maxBodyBytes, maxEventBytes, 'maxBodyBytes', 256),
    skewSeconds: positive(options.skewSeconds, OHAN_SKEW_SECONDS, 'skewSeconds', 0),
    rateLimit: rate,
    limiter: options.limiter,
    wakeUps: options.wakeUps,
    sweepLock: options.sweepLock ?? ((sweep) => sweep()),
    sourceOf: options.sourceOf,
    sourceRateLimit: sourceRate,
    sourceLimiter: options.sourceLimiter,
    maxStreamsPerKey: positive(options.maxStreamsPerKey, 4, 'maxStreamsPerKey'),
    maxStreams: positive(options.maxStreams, 10_000, 'maxStreams'),
    keepAliveMs: positive(options.keepAliveMs, 15_000, 'keepAliveMs', 0),
    maxStreamQueuedBytes: positive(options.maxStreamQueuedBytes, 4 * 1024 * 1024, 'maxStreamQueuedBytes'),
    sweepIntervalMs: positive(options.sweepIntervalMs, 60_000, 'sweepIntervalMs', 0),
    onError: options.onError ?? (() => {}),
    onRequest: options.onRequest,
    verifyThreads:
      options.verifyThreads === undefined ? undefined : positive(options.verifyThreads, 0, 'verifyThreads', 0),
    bodyBudget: options.bodyBudget,
    bodyTimeoutMs: positive(options.bodyTimeoutMs, 30_000, 'bodyTimeoutMs'),
    outboundBudget: options.outboundBudget,
  };
}
