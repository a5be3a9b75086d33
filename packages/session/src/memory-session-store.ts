import { isPending, type SessionRecord } from './session-model.js';
import {
  checkSessionStoreLimits,
  type SessionChange,
  type SessionCounts,
  type SessionStore,
  type SessionStoreLimits,
  sessionCapRefusal,
} from './session-store.js';

/**
 * Sessions in memory, bounded by the store limits. Records are immutable and kept by reference
 * (a server reads one per message; copying it cost as much as the rest of the pipeline). Every
 * operation runs synchronously inside its call, so an `update` can never interleave with another.
 */
export class MemorySessionStore implements SessionStore {
  readonly limits: SessionStoreLimits;
  readonly #sessions = new Map<string, SessionRecord>();
  #pending = 0;

  constructor(limits: Partial<SessionStoreLimits> = {}) {
    this.limits = checkSessionStoreLimits(limits);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.#sessions.get(id);
  }

  async create(session: SessionRecord): Promise<void> {
    if (this.#sessions.has(session.id)) throw new RangeError('session id exists');
    const refusal = sessionCapRefusal(this.limits, this.#counts(), undefined, session);
    if (refusal) throw refusal;
    this.#set(undefined, session);
  }

  async update(id: string, change: SessionChange): Promise<SessionRecord | undefined> {
    const current = this.#sessions.get(id);
    if (current === undefined) return undefined;
    const next = change(current);
    if (next === current) return current;
    const refusal = sessionCapRefusal(this.limits, this.#counts(), current, next);
    if (refusal) throw refusal;
    this.#set(current, next);
    return next;
  }

  async delete(id: string): Promise<void> {
    const current = this.#sessions.get(id);
    if (current === undefined) return;
    this.#sessions.delete(id);
    if (isPending(current)) this.#pending--;
  }

  async sweep(now: number): Promise<number> {
    let n = 0;
    for (const [id, s] of this.#sessions) {
      if (s.expiresAt > now) continue;
      this.#sessions.delete(id);
      if (isPending(s)) this.#pending--;
      n++;
    }
    return n;
  }

  async counts(): Promise<SessionCounts> {
    return this.#counts();
  }

  #counts(): SessionCounts {
    return { sessions: this.#sessions.size, pending: this.#pending };
  }

  #set(previous: SessionRecord | undefined, next: SessionRecord): void {
    this.#pending += Number(isPending(next)) - Number(previous !== undefined && isPending(previous));
    this.#sessions.set(next.id, next);
  }
}
