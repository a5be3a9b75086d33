import type { ReplayCache, ReplayCacheLimits } from '@wmp/jcs-signing';
import type { KeyPackageBudgetOptions, KeyPackageBudgets } from './key-package-budgets.js';
import type { PresenceDirectory } from './presence-directory.js';
import type { RateLimiter, TokenBucketOptions } from './rate-limiter.js';
import type { WakeUpLimits, WakeUps } from './wake-ups.js';

/**
 * `ok`: the backend answers. `degraded`: it does not (Redis down, unreachable or too slow): signed
 * box requests are refused (503, replays cannot be checked), rate limits and key-package budgets
 * are per node, presence and wake-ups catch up on reconnect; everything durable is still served.
 */
export type CoordinationHealth = 'ok' | 'degraded';

/** The bounds of the shared caches, the same for every adapter. */
export interface CoordinationLimits {
  /** Box request nonces: default 200,000 entries, a key's share 1/16, a source's 1/8. */
  readonly nonces?: ReplayCacheLimits;
  /** DPoP `jti`s and other single-use values: default 200,000 entries. */
  readonly replays?: ReplayCacheLimits;
  /** Statuses from peer relays passed on (`statusClaims`); default 500,000 entries. */
  readonly statusClaims?: ReplayCacheLimits;
  /** Handlers of relay queue wake-ups on one node. */
  readonly wakeUps?: WakeUpLimits;
  /** Handlers of box stream wake-ups on one node (the box's streams per key and in total); default `wakeUps`. */
  readonly boxWakeUps?: WakeUpLimits;
}

/**
 * Everything a relay node shares with the other nodes of its cluster that may be lost
 * (docs/architecture.md, "Coordination"): one bundle per node. The memory adapter is one process
 * (or several nodes in one process, through one hub); the Redis adapter is a cluster.
 */
export interface Coordination {
  /** This node's id (in presence entries, logs, metrics). */
  readonly nodeId: string;
  /** Nonces of signed box requests (`verifyRequest` scopes each to its signer and source). */
  readonly nonces: ReplayCache;
  /** DPoP `jti`s and other single-use values. */
  readonly replays: ReplayCache;
  /**
   * Statuses a peer relay sent back that a node passed on (federation: each once for the whole
   * relay); a cache of its own, so a flood of them never fills the one DPoP relies on.
   */
  readonly statusClaims: ReplayCache;
  readonly presence: PresenceDirectory;
  /** Relay queue wake-ups (channel `wake:{recipient}`). */
  readonly wakeUps: WakeUps;
  /** Box stream wake-ups (channel `box:{key}`). */
  readonly boxWakeUps: WakeUps;
  /**
   * A channel per node (`node:{nodeId}`): each node subscribes to its own id, and `notify(nodeId,
   * note)` reaches that node (frames of routed sessions and their answers). Best effort, as notes.
   */
  readonly nodes: WakeUps;
  /**
   * Notes to every node that listens to a topic (channel `all:{topic}`): each node subscribes to
   * the topics it serves (`sessions`: session records changed, cached copies go). Best effort, as
   * notes: what a node keeps on the strength of them it keeps only while `listening(topic)`, and
   * drops on every reconnect.
   */
  readonly broadcast: WakeUps;
  /**
   * Token buckets named `name`, shared by every node (the same name is the same buckets). Never
   * throws for an outage: a node then limits with a local bucket of the same options.
   */
  rateLimiter(name: string, options: TokenBucketOptions): RateLimiter;
  /** Key-package budgets shared by every node; per node (a local window) during an outage. */
  keyPackageBudgets(options: KeyPackageBudgetOptions): KeyPackageBudgets;
  health(): CoordinationHealth;
  /** Called on every change of `health()`; returns its removal. */
  onHealth(listener: (health: CoordinationHealth) => void): () => void;
  /** Withdraws this node's presence, drops its subscriptions, closes its connections. */
  close(): Promise<void>;
}
