import type { SessionRecord, SessionStore } from '@wmp/session';
import type BetterSqlite3 from 'better-sqlite3';
import { StoreClosedError, StoreInputError } from './errors.js';
import type { WriteQueue } from './write-queue.js';

/** Rows one sweep transaction deletes: a long sweep is several short transactions. */
const SWEEP_BATCH = 1000;

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
 */
export class SqliteSessionStore implements SessionStore {
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;
  readonly #maxSessions: number;

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, options: { maxSessions?: number } = {}) {
    this.#writer = writer;
    this.#s = statements(db);
    this.#maxSessions = options.maxSessions ?? 100_000;
  }

  /** Sessions stored, O(1). */
  get size(): number {
    this.#open();
    return this.#s.count.get()!;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    this.#open();
    const text = this.#s.get.get(id);
    return text === undefined ? undefined : decode(text);
  }

  async put(session: SessionRecord): Promise<void> {
    this.#open();
    if (typeof session?.id !== 'string' || !Number.isFinite(session.expiresAt)) {
      throw new StoreInputError('not a session record');
    }
    const { id, expiresAt } = session;
    const text = JSON.stringify(session);
    await this.#writer.run(() => {
      if (this.#s.exists.get(id) === undefined) {
        if (this.#s.count.get()! >= this.#maxSessions) throw new RangeError('session store full');
        this.#s.addCount.run(1);
      }
      this.#s.upsert.run(id, expiresAt, text);
    });
  }

  async delete(id: string): Promise<void> {
    this.#open();
    await this.#writer.run(() => {
      const { changes } = this.#s.delete.run(id);
      if (changes > 0) this.#s.addCount.run(-changes);
    });
  }

  async sweep(now: number): Promise<number> {
    this.#open();
    let total = 0;
    for (;;) {
      const removed = await this.#writer.run(() => {
        const { changes } = this.#s.sweep.run(now, SWEEP_BATCH);
        if (changes > 0) this.#s.addCount.run(-changes);
        return changes;
      });
      total += removed;
      if (removed < SWEEP_BATCH) return total;
    }
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }
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
