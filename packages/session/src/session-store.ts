import type { SessionRecord } from './session-model.js';

/**
 * Where a responder keeps sessions. Async, so a persistent or distributed store drops in without
 * changing callers (DESIGN §6). `put` stores a snapshot; callers never rely on object identity.
 */
export interface SessionStore {
  get(id: string): Promise<SessionRecord | undefined>;
  put(session: SessionRecord): Promise<void>;
  delete(id: string): Promise<void>;
  /** Removes sessions that expired before `now`; returns how many. */
  sweep(now: number): Promise<number>;
}

/**
 * An in-memory store with a bound on the number of sessions. Records are kept by reference (a
 * server reads one per message, and copying it cost as much as the rest of the pipeline):
 * callers change a record and then `put` it, as with any store.
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #maxSessions: number;

  constructor(options: { maxSessions?: number } = {}) {
    this.#maxSessions = options.maxSessions ?? 100_000;
  }

  get size(): number {
    return this.#sessions.size;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.#sessions.get(id);
  }

  async put(session: SessionRecord): Promise<void> {
    if (!this.#sessions.has(session.id) && this.#sessions.size >= this.#maxSessions) {
      throw new RangeError('session store full');
    }
    this.#sessions.set(session.id, session);
  }

  async delete(id: string): Promise<void> {
    this.#sessions.delete(id);
  }

  async sweep(now: number): Promise<number> {
    let n = 0;
    for (const [id, s] of this.#sessions) {
      if (s.expiresAt <= now) {
        this.#sessions.delete(id);
        n++;
      }
    }
    return n;
  }
}
