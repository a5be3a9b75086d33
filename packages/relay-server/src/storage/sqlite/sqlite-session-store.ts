import { BoundedMap } from '@wmp/jsonrpc-envelope';
import {
  checkSessionStoreLimits,
  isPending,
  type SessionChange,
  type SessionCounts,
  type SessionRecord,
  type SessionStore,
  type SessionStoreLimits,
  sessionCapRefusal,
} from '@wmp/session';
import type BetterSqlite3 from 'better-sqlite3';
import { decodeSession as decode, encodeSession as encode } from '../contracts/session-json.js';
import { StoreClosedError, StoreInputError } from '../errors.js';
import type { WriteQueue } from './write-queue.js';

/** Rows one sweep transaction deletes: a long sweep is several short transactions. */
const SWEEP_BATCH = 1000;

/** Decoded records kept in memory by default (least recently used dropped first). */
const DEFAULT_CACHE_SIZE = 1024;

function statements(db: BetterSqlite3.Database) {
  return {
    get: db.prepare<[string], string>('SELECT record FROM wmp_sessions WHERE id = ?').pluck(),
    counts: db.prepare<[], { name: string; count: number }>(
      "SELECT name, count FROM totals WHERE name IN ('sessions', 'pending_sessions')",
    ),
    insert: db.prepare('INSERT INTO wmp_sessions (id, expires_at, pending, record) VALUES (?, ?, ?, ?)'),
    update: db.prepare('UPDATE wmp_sessions SET expires_at = ?, pending = ?, record = ? WHERE id = ?'),
    delete: db.prepare<[string], { pending: number }>('DELETE FROM wmp_sessions WHERE id = ? RETURNING pending'),
    sweep: db.prepare<[number, number], { pending: number }>(
      `DELETE FROM wmp_sessions WHERE rowid IN (SELECT rowid FROM wmp_sessions WHERE expires_at <= ? LIMIT ?)
       RETURNING pending`,
    ),
    addCount: db.prepare<[number, string]>('UPDATE totals SET count = count + ? WHERE name = ?'),
  };
}

/**
 * `SessionStore` of @wmp/session on SQLite, so clients resume across a relay restart
 * (docs/architecture.md, "Storage"). A record is stored as JSON: it holds only SHA-256 hashes of
 * resumption tokens, never a token.
 *
 * Every write runs inside the single writer (`WriteQueue`), synchronously: an `update` reads the
 * current record, applies the change and writes it in one operation, so two changes of one
 * session never interleave (a token or challenge is used once, however many requests race), and a
 * change that throws is rolled back with its savepoint. The most recently used records are kept
 * decoded (`cacheSize`, default 1024): records are immutable, so a hit is the cached object. The
 * cache holds committed state only: it changes inside the write that changes the row, and is
 * dropped when a transaction rolls back.
 */
export class SqliteSessionStore implements SessionStore {
  readonly limits: SessionStoreLimits;
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;
  readonly #cacheSize: number;
  /** Committed records by id, least recently used first. */
  readonly #cache: BoundedMap<string, SessionRecord>;

  constructor(
    db: BetterSqlite3.Database,
    writer: WriteQueue,
    options: Partial<SessionStoreLimits> & { cacheSize?: number } = {},
  ) {
    const { cacheSize, ...limits } = options;
    this.limits = checkSessionStoreLimits(limits);
    this.#writer = writer;
    this.#s = statements(db);
    this.#cacheSize = Math.max(0, cacheSize ?? DEFAULT_CACHE_SIZE);
    this.#cache = new BoundedMap(Math.max(1, this.#cacheSize));
    // A failed transaction may have changed cached records that never reached the disk.
    writer.onRollback(() => this.#cache.clear());
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    this.#open();
    return this.#read(id);
  }

  async create(session: SessionRecord): Promise<void> {
    this.#open();
    const text = encode(session);
    await this.#writer.run(() => {
      if (this.#read(session.id) !== undefined) throw new RangeError('session id exists');
      const refusal = sessionCapRefusal(this.limits, this.#counts(), undefined, session);
      if (refusal) throw refusal;
      const pending = isPending(session);
      this.#s.insert.run(session.id, session.expiresAt, Number(pending), text);
      this.#s.addCount.run(1, 'sessions');
      if (pending) this.#s.addCount.run(1, 'pending_sessions');
      // Last, so a statement that throws (its savepoint rolled back) leaves the cache alone.
      this.#remember(decode(text));
    });
  }

  async update(id: string, change: SessionChange): Promise<SessionRecord | undefined> {
    this.#open();
    return this.#writer.run(() => {
      const current = this.#read(id);
      if (current === undefined) return undefined;
      const next = change(current);
      if (next === current) return current;
      if (next.id !== id) throw new StoreInputError('a change may not change the id');
      const refusal = sessionCapRefusal(this.limits, this.#counts(), current, next);
      if (refusal) throw refusal;
      const text = encode(next);
      const [was, is] = [isPending(current), isPending(next)];
      this.#s.update.run(next.expiresAt, Number(is), text, id);
      if (was !== is) this.#s.addCount.run(is ? 1 : -1, 'pending_sessions');
      const stored = decode(text);
      this.#remember(stored);
      return stored;
    });
  }

  async delete(id: string): Promise<void> {
    this.#open();
    await this.#writer.run(() => {
      const removed = this.#s.delete.get(id);
      if (removed !== undefined) {
        this.#s.addCount.run(-1, 'sessions');
        if (removed.pending) this.#s.addCount.run(-1, 'pending_sessions');
      }
      this.#cache.delete(id);
    });
  }

  async sweep(now: number): Promise<number> {
    this.#open();
    let total = 0;
    for (;;) {
      const removed = await this.#writer.run(() => {
        const rows = this.#s.sweep.all(now, SWEEP_BATCH);
        const pending = rows.filter((r) => r.pending).length;
        if (rows.length > 0) this.#s.addCount.run(-rows.length, 'sessions');
        if (pending > 0) this.#s.addCount.run(-pending, 'pending_sessions');
        for (const [id, record] of this.#cache) if (record.expiresAt <= now) this.#cache.delete(id);
        return rows.length;
      });
      total += removed;
      if (removed < SWEEP_BATCH) return total;
    }
  }

  async counts(): Promise<SessionCounts> {
    this.#open();
    return this.#counts();
  }

  #counts(): SessionCounts {
    let sessions = 0;
    let pending = 0;
    for (const row of this.#s.counts.all()) {
      if (row.name === 'sessions') sessions = row.count;
      else pending = row.count;
    }
    return { sessions, pending };
  }

  #read(id: string): SessionRecord | undefined {
    const cached = this.#cache.get(id);
    if (cached !== undefined) {
      this.#cache.delete(id);
      this.#cache.set(id, cached);
      return cached;
    }
    const text = this.#s.get.get(id);
    if (text === undefined) return undefined;
    const record = decode(text);
    this.#remember(record);
    return record;
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }

  #remember(record: SessionRecord): void {
    if (this.#cacheSize === 0) return;
    this.#cache.delete(record.id);
    this.#cache.set(record.id, record);
  }
}
