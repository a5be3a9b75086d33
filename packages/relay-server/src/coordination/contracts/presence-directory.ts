/**
 * Which nodes of a cluster hold a live endpoint of an identity (docs/architecture.md, "Cluster"): a
 * hint, kept in Redis with a TTL, never on disk. What the directory says may be a moment old (a
 * node that just died, an endpoint that just closed); what is durable is the queue, read from
 * PostgreSQL.
 */
export interface PresenceDirectory {
  /**
   * `identity` has a live endpoint on `nodeId`. The entry stays until `withdraw`: this directory
   * refreshes it (at least every `ttlMs / 3`) while it is open and re-announces it after every
   * reconnect; if the node dies, the entry disappears at most `ttlMs` after its last refresh.
   * Idempotent (a second announce replaces the TTL). Never rejects for an outage: the entry is
   * kept locally and written when the backend is back.
   */
  announce(identity: string, nodeId: string, ttlMs: number): Promise<void>;
  /** The endpoint is gone: no more refreshes, and the entry goes now (best effort during an outage). */
  withdraw(identity: string, nodeId: string): Promise<void>;
  /**
   * The nodes where `identity` is announced now, distinct and sorted. Rejects with
   * `CoordinationUnavailableError` when the backend cannot be asked.
   */
  nodesOf(identity: string): Promise<readonly string[]>;
}
