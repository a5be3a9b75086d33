import type { PresenceDirectory } from '../contracts/presence-directory.js';

interface Entry {
  ttlMs: number;
  /** When the entry disappears: never while its node lives (it would refresh it), else ttl after it stopped. */
  deadline: number;
}

/**
 * Presence in memory: one process, or several nodes of one process sharing this directory (tests,
 * embedders). A node that is alive keeps its entries (it refreshes them, as the Redis adapter
 * does); `stopNode` is its death: its entries go `ttlMs` later, as they would in Redis.
 */
export class MemoryPresenceDirectory implements PresenceDirectory {
  readonly #byIdentity = new Map<string, Map<string, Entry>>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Identities with at least one entry (for tests of the bound). */
  get size(): number {
    return this.#byIdentity.size;
  }

  async announce(identity: string, nodeId: string, ttlMs: number): Promise<void> {
    if (!(ttlMs >= 3)) throw new RangeError('presence ttl must be >= 3 ms');
    let nodes = this.#byIdentity.get(identity);
    if (nodes === undefined) {
      nodes = new Map();
      this.#byIdentity.set(identity, nodes);
    }
    nodes.set(nodeId, { ttlMs, deadline: Number.POSITIVE_INFINITY });
  }

  async withdraw(identity: string, nodeId: string): Promise<void> {
    const nodes = this.#byIdentity.get(identity);
    if (nodes === undefined) return;
    nodes.delete(nodeId);
    if (nodes.size === 0) this.#byIdentity.delete(identity);
  }

  async nodesOf(identity: string): Promise<readonly string[]> {
    const nodes = this.#byIdentity.get(identity);
    if (nodes === undefined) return [];
    const now = this.#now();
    const live: string[] = [];
    for (const [node, entry] of nodes) {
      if (entry.deadline > now) live.push(node);
      else nodes.delete(node);
    }
    if (nodes.size === 0) this.#byIdentity.delete(identity);
    return live.sort();
  }

  /** Every entry of `nodeId` goes now (a node that closes cleanly). */
  withdrawNode(nodeId: string): void {
    for (const [identity, nodes] of this.#byIdentity) {
      nodes.delete(nodeId);
      if (nodes.size === 0) this.#byIdentity.delete(identity);
    }
  }

  /** `nodeId` stopped refreshing (it died): its entries go at most their TTL from now. */
  stopNode(nodeId: string): void {
    const now = this.#now();
    for (const nodes of this.#byIdentity.values()) {
      const entry = nodes.get(nodeId);
      if (entry !== undefined && entry.deadline === Number.POSITIVE_INFINITY) entry.deadline = now + entry.ttlMs;
    }
  }
}
