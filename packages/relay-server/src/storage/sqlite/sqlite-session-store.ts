import type { SessionRecord, SessionStore } from '@wmp/session';
import type BetterSqlite3 from 'better-sqlite3';
import { StoreClosedError, StoreInputError } from '../errors.js';
import type { WriteQueue } from './write-queue.js';

/** Rows one sweep transaction deletes: a long sweep is several short transactions. */
const SWEEP_BATCH = 1000;

/** Decoded records kept in memory by default (least recently used dropped first). */
const DEFAULT_CACHE_SIZE = 1024;

function statements(db: BetterSqlite3.Database) {
  return {
    get: db.prepare<[string], string>('SELECT record FROM wmp_sessions WHERE id = ?').pluck(),
    exists: db.prepare<[string], number>('SELECT 1 FROM wmp_sessions WHERE id = ?').pluck(),
    count: db.prepare<[], number>("SELECT count FROM totals WHERE name = 'sessions'").pluck(),
    upsert: db.prepare(
      `INSERT INTO wmp_sessions (id, expires_at, record) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record`,
    ),
    delete: db.prepare('DELETE FROM wmp_sessions WHERE id = ?'),
    sweep: db.prepare(
      'DELETE FROM wmp_sessions WHERE rowid IN (SELECT rowid FROM wmp_sessions WHERE expires_at <= ? LIMIT ?)',
    ),
    addCount: db.prepare("UPDATE totals SET count = count + ? WHERE name = 'sessions'"),
  };
}

/**
 * `SessionStore` of @wmp/session on SQLite, so clients resume across a relay restart (DESIGN §6).
 * A record is stored as JSON: it holds only SHA-256 hashes of resumption tokens, never a token.
 * Like `MemorySessionStore`, it refuses a new session beyond `maxSessions` with a RangeError.
 * `put` stores a snapshot taken when it is called; `get` returns a fresh copy.
 *
 * The server reads a record on every message, so the most recently used records are kept
 * decoded (`cacheSize`, default 1024): a hit is a plain copy, four times cheaper than parsing the
 * row and without the read. The cache holds committed state only: it changes inside the write
 * that changes the row (so in the same order), and is dropped when a transaction rolls back.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;
  readonly #maxSessions: number;
  readonly #cacheSize: number;
  /** Committed records by id, least recently used first. */
  readonly #cache = new Map<string, SessionRecord>();

  constructor(
    db: BetterSqlite3.Database,
    writer: WriteQueue,
    options: { maxSessions?: number; cacheSize?: number } = {},
  ) {
    this.#writer = writer;
    this.#s = statements(db);
    this.#maxSessions = options.maxSessions ?? 100_000;
    this.#cacheSize = Math.max(0, options.cacheSize ?? DEFAULT_CACHE_SIZE);
    // A failed transaction may have changed cached records that never reached the disk.
    writer.onRollback(() => this.#cache.clear());
  }

  /** Sessions stored, O(1). */
  get size(): number {
    this.#open();
    return this.#s.count.get()!;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    this.#open();
    const cached = this.#cache.get(id);
    if (cached !== undefined) {
      this.#cache.delete(id);
      this.#cache.set(id, cached);
      return copyRecord(cached);
    }
    const text = this.#s.get.get(id);
    if (text === undefined) return undefined;
    const record = decode(text);
    this.#remember(id, record);
    return copyRecord(record);
  }

  async put(session: SessionRecord): Promise<void> {
    this.#open();
    if (typeof session?.id !== 'string' || !Number.isFinite(session.expiresAt)) {
      throw new StoreInputError('not a session record');
    }
    const { id, expiresAt } = session;
    const text = JSON.stringify(session);
    // What a read of the row gives back (JSON drops members that have no JSON form).
    const snapshot = decode(text);
    await this.#writer.run(() => {
      if (this.#s.exists.get(id) === undefined) {
        if (this.#s.count.get()! >= this.#maxSessions) throw new RangeError('session store full');
        this.#s.addCount.run(1);
      }
      this.#s.upsert.run(id, expiresAt, text);
      // Last, so a statement that throws (its savepoint rolled back) leaves the cache alone.
      this.#remember(id, snapshot);
    });
  }

  async delete(id: string): Promise<void> {
    this.#open();
    await this.#writer.run(() => {
      const { changes } = this.#s.delete.run(id);
      if (changes > 0) this.#s.addCount.run(-changes);
      this.#cache.delete(id);
    });
  }

  async sweep(now: number): Promise<number> {
    this.#open();
    let total = 0;
    for (;;) {
      const removed = await this.#writer.run(() => {
        const { changes } = this.#s.sweep.run(now, SWEEP_BATCH);
        if (changes > 0) this.#s.addCount.run(-changes);
        for (const [id, record] of this.#cache) if (record.expiresAt <= now) this.#cache.delete(id);
        return changes;
      });
      total += removed;
      if (removed < SWEEP_BATCH) return total;
    }
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }

  #remember(id: string, record: SessionRecord): void {
    if (this.#cacheSize === 0) return;
    this.#cache.delete(id);
    this.#cache.set(id, record);
    if (this.#cache.size > this.#cacheSize) this.#cache.delete(this.#cache.keys().next().value as string);
  }
}

/** A deep copy of JSON data (what a decoded record is): callers may change what `get` returns. */
function copyJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copyJson((value as Record<string, unknown>)[key]);
  return out as T;
}

function copyRecord(record: SessionRecord): SessionRecord {
  return copyJson(record);
}

/** JSON drops `undefined` members; the record type has them as required keys, so they are put back. */
function decode(text: string): SessionRecord {
  const record = JSON.parse(text) as SessionRecord;
  return {
    ...record,
    initiator: record.initiator,
    challenge: record.challenge,
    resumptionTokens: record.resumptionTokens.map(({ hash, identity }) => ({ hash, identity })),
  };
}
