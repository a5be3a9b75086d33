import { CoordinationUnavailableError } from '../contracts/errors.js';
import type { PresenceDirectory } from '../contracts/presence-directory.js';
import type { RedisKeys } from './keys.js';
import type { RedisLink } from './link.js';
import { ANNOUNCE, NODES } from './scripts.js';

interface Announced {
  readonly identity: string;
  readonly nodeId: string;
  readonly ttlMs: number;
  /** When it was last written (or tried). */
  refreshedAt: number;
}

/** Withdrawals kept for after a reconnect when Redis could not take them (beyond: the TTL does it). */
const MAX_PENDING_WITHDRAWALS = 10_000;

/**
 * Presence in Redis: per identity a zset of node -> expiry (server clock), whose key lives as long
 * as its latest entry. This directory remembers what it announced and refreshes each entry every
 * `ttl / 3`, re-announces everything at once after every reconnect (a restarted Redis is empty),
 * and withdraws everything on close. A node that dies refreshes nothing: its entries expire.
 */
export class RedisPresenceDirectory implements PresenceDirectory {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #entries = new Map<string, Announced>();
  readonly #withdrawn = new Map<string, { identity: string; nodeId: string }>();
  #timer: NodeJS.Timeout | undefined;
  #periodMs = Number.POSITIVE_INFINITY;
  #stopped = false;
  readonly #offReady: () => void;
  /** Refresh passes run (for tests and metrics). */
  refreshes = 0;

  constructor(link: RedisLink, keys: RedisKeys) {
    this.#link = link;
    this.#keys = keys;
    this.#offReady = link.onReady('commands', () => void this.#afterReconnect());
  }

  /** Entries this node announced and keeps alive. */
  get size(): number {
    return this.#entries.size;
  }

  async announce(identity: string, nodeId: string, ttlMs: number): Promise<void> {
    if (!(ttlMs >= 3)) throw new RangeError('presence ttl must be >= 3 ms');
    if (this.#stopped) return;
    const id = entryId(identity, nodeId);
    const entry: Announced = { identity, nodeId, ttlMs: Math.ceil(ttlMs), refreshedAt: Date.now() };
    this.#entries.set(id, entry);
    this.#withdrawn.delete(id);
    this.#schedule(entry.ttlMs / 3);
    await this.#write(entry);
  }

  async withdraw(identity: string, nodeId: string): Promise<void> {
    const id = entryId(identity, nodeId);
    this.#entries.delete(id);
    try {
      await this.#link.call((c) => c.zRem(this.#keys.presence(identity), nodeId));
      this.#withdrawn.delete(id);
    } catch {
      if (this.#withdrawn.size < MAX_PENDING_WITHDRAWALS) this.#withdrawn.set(id, { identity, nodeId });
    }
  }

  async nodesOf(identity: string): Promise<readonly string[]> {
    let reply: unknown;
    try {
      reply = await this.#link.script(NODES, [this.#keys.presence(identity)], []);
    } catch (error) {
      throw new CoordinationUnavailableError({ cause: error });
    }
    if (!Array.isArray(reply)) throw new CoordinationUnavailableError({ cause: new Error('unexpected reply') });
    return reply.map(String).sort();
  }

  /** Withdraws every entry of this directory (a clean shutdown), then stops. */
  async close(): Promise<void> {
    const entries = [...this.#entries.values()];
    this.stop();
    await Promise.all(entries.map((e) => this.withdraw(e.identity, e.nodeId)));
  }

  /** Stops refreshing without withdrawing (what a crash does; the entries expire by TTL). */
  stop(): void {
    this.#stopped = true;
    this.#offReady();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #schedule(periodMs: number): void {
    if (periodMs >= this.#periodMs) return;
    this.#periodMs = periodMs;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = setInterval(() => this.#refresh(), Math.max(1, Math.floor(periodMs)));
    this.#timer.unref();
  }

  #refresh(): void {
    this.refreshes++;
    if (!this.#link.usable) return; // the reconnect re-announces everything
    const now = Date.now();
    // Due: a third of its TTL since the last write, give or take half a tick.
    for (const entry of this.#entries.values()) {
      if (now - entry.refreshedAt + this.#periodMs / 2 >= entry.ttlMs / 3) void this.#write(entry);
    }
  }

  async #write(entry: Announced): Promise<void> {
    entry.refreshedAt = Date.now();
    try {
      await this.#link.script(ANNOUNCE, [this.#keys.presence(entry.identity)], [entry.nodeId, String(entry.ttlMs)]);
    } catch {
      // Kept here: written again on the next refresh or reconnect.
    }
  }

  async #afterReconnect(): Promise<void> {
    if (this.#stopped) return;
    const withdrawn = [...this.#withdrawn.values()];
    await Promise.all([
      ...[...this.#entries.values()].map((e) => this.#write(e)),
      ...withdrawn.map((w) => this.withdraw(w.identity, w.nodeId)),
    ]);
  }
}

function entryId(identity: string, nodeId: string): string {
  return `${nodeId}\n${identity}`;
}
