import type { Keypair } from '@wmp/jcs-signing';
import type { WmpServerOptions } from '@wmp/session';
import type { Hono } from 'hono';
import type { QueueLimits } from '../storage/contracts/queue-store.js';
import type { RelayStores } from '../storage/contracts/relay-stores.js';
import type { Logger } from './logger.js';

/** Every bound the relay enforces (DESIGN §7), each with a default that suits one small node. */
export interface RelayLimits {
  /** Largest JSON-RPC message on any binding, in bytes; advertised as `messaging.max_size`. */
  readonly maxMessageBytes: number;
  /** Open WebSocket connections plus HTTP sessions. */
  readonly maxConnections: number;
  /** Live registered connections (devices) of one identity; more get -31007. */
  readonly maxConnectionsPerIdentity: number;
  readonly maxSessionsPerConnection: number;
  /** Messages queued per recipient (`offline.max_queued`); more get -31014. */
  readonly maxQueued: number;
  /** Bytes queued per recipient; more get -31014. */
  readonly maxQueueBytes: number;
  /** Sustained requests per second of one identity (token bucket); over it: -31007. */
  readonly requestsPerSecond: number;
  /** Burst size of that bucket. */
  readonly requestBurst: number;
  /** Unexpired key packages kept per identity (each verified on publish). */
  readonly maxKeyPackagesPerIdentity: number;
  /**
   * Key packages one caller may take of one other identity per hour (in memory only); more get
   * -31007 `key package budget` and nothing is taken. One's own are not limited.
   */
  readonly keyPackageFetchesPerTarget: number;
}

/** Retention and timing. */
export interface RelayTimings {
  /** Default message lifetime when neither `expires_at` nor the session's `offline.ttl` says (`offline.ttl`). */
  readonly messageTtlSeconds: number;
  /** Upper bound for any message lifetime, whatever the sender asks. */
  readonly maxMessageTtlSeconds: number;
  /** How long a `wmp.relay.register` holds (bounded by the session's own expiry). */
  readonly registrationTtlSeconds: number;
  /** How often the expiry sweeper runs. */
  readonly sweepIntervalMs: number;
  /** Longest a published key package is handed out (its own lifetime, usually 30 d, may end it sooner). */
  readonly keyPackageTtlSeconds: number;
  /** Rows per sweep transaction, and most transactions per run (the rest waits for the next run). */
  readonly sweepBatch: number;
  readonly sweepBatchesPerRun: number;
}

export const DEFAULT_RELAY_LIMITS: RelayLimits = Object.freeze({
  maxMessageBytes: 1024 * 1024,
  maxConnections: 10_000,
  maxConnectionsPerIdentity: 16,
  maxSessionsPerConnection: 16,
  maxQueued: 1000,
  maxQueueBytes: 16 * 1024 * 1024,
  requestsPerSecond: 200,
  requestBurst: 400,
  maxKeyPackagesPerIdentity: 100,
  keyPackageFetchesPerTarget: 3,
});

export const DEFAULT_RELAY_TIMINGS: RelayTimings = Object.freeze({
  messageTtlSeconds: 24 * 3600,
  maxMessageTtlSeconds: 30 * 24 * 3600,
  registrationTtlSeconds: 3600,
  keyPackageTtlSeconds: 30 * 24 * 3600,
  sweepIntervalMs: 30_000,
  sweepBatch: 1000,
  sweepBatchesPerRun: 10,
});

/** The relay's own Ed25519 identity: a 32-byte seed, or a keypair. The app layer persists it. */
export type RelayIdentityInput = { readonly seed: Uint8Array } | { readonly keypair: Keypair };

/** A hono sub-app (or a factory of one) served under `/ohan/v1`: the OHAN box API. */
export type BoxAppInput = Hono | ((stores: RelayStores) => Hono);

export interface RelayConfig {
  /** Default: a fresh random identity (fine for tests; a deployment passes a persisted seed). */
  readonly identity?: RelayIdentityInput;
  /** Where to listen; default `127.0.0.1`, port 0 (any free port). */
  readonly host?: string;
  readonly port?: number;
  /** The public origin (`https://relay.example`); default the listening address. Endpoints and relay_chain use it. */
  readonly publicUrl?: string;
  /**
   * The stores, or a factory that gets the queue limits of this config (so they are enforced
   * by the store, in the same transaction as the append). Default: `MemoryStore`. The relay
   * closes its stores on `close()`.
   */
  readonly store?: RelayStores | ((queue: QueueLimits) => RelayStores);
  readonly limits?: Partial<RelayLimits>;
  readonly timings?: Partial<RelayTimings>;
  /** The relay's own MLS key packages for `/.well-known/mls-key-packages` (default none). */
  readonly keyPackages?: readonly Record<string, unknown>[];
  readonly box?: BoxAppInput;
  /** Structured logs (JSON lines); default silent. Never gets addresses or message content. */
  readonly logger?: Logger;
  /** Extra authenticators by auth type (e.g. `bearer`); signed_challenge is always on. */
  readonly authenticators?: WmpServerOptions['authenticators'];
  /** Privacy statement of the well-known document (§8.8.2). */
  readonly privacy?: Readonly<Record<string, string>>;
  readonly now?: () => number;
}

export interface ResolvedConfig {
  readonly limits: RelayLimits;
  readonly timings: RelayTimings;
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/** Merges the defaults and refuses a bound that is not a positive integer, at construction. */
export function resolveConfig(config: RelayConfig): ResolvedConfig {
  const limits = { ...DEFAULT_RELAY_LIMITS, ...config.limits };
  const timings = { ...DEFAULT_RELAY_TIMINGS, ...config.timings };
  for (const [k, v] of Object.entries(limits)) positive(v, `limits.${k}`);
  for (const [k, v] of Object.entries(timings)) positive(v, `timings.${k}`);
  return { limits: Object.freeze(limits), timings: Object.freeze(timings) };
}
