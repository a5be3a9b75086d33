import { utf8Length } from '@wmp/jsonrpc-envelope';
import type BetterSqlite3 from 'better-sqlite3';
import {
  type CheckedQuery,
  checkCase,
  checkEntry,
  checkQuery,
  cursorOf,
  decodeCase,
} from '../contracts/evidence-input.js';
import { EVIDENCE_COLUMNS, type EvidenceRow, evidenceEntryOf, evidenceRowValues } from '../contracts/evidence-rows.js';
import {
  checkEvidenceLimits,
  type EvidenceCase,
  type EvidenceEntry,
  type EvidenceLimits,
  type EvidenceOverview,
  type EvidencePage,
  type EvidenceQuery,
  type EvidenceStore,
} from '../contracts/evidence-store.js';
import { clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import type { Totals } from '../contracts/totals.js';
import { StoreClosedError } from '../errors.js';
import type { WriteQueue } from './write-queue.js';

/** A row as SQLite returns it: `parties` is the JSON text of the array. */
type Row = Omit<EvidenceRow, 'parties'> & { readonly parties: string };

// Only records the party may read: the parties table is the index of that.
const READABLE = 'EXISTS (SELECT 1 FROM evidence_parties AS p WHERE p.party = ? AND p.record = r.seq)';
const BY_MESSAGE = `r.message_id = ? AND ${READABLE}`;
const BY_SESSION = `r.session_id = ? AND r.event_time >= ? AND r.event_time <= ? AND ${READABLE}`;

function statements(db: BetterSqlite3.Database) {
  return {
    get: db.prepare<[string], Row>(`SELECT ${EVIDENCE_COLUMNS.read} FROM evidence_records WHERE id = ?`),
    has: db.prepare<[string], number>('SELECT 1 FROM evidence_records WHERE id = ?').pluck(),
    insert: db.prepare(
      `INSERT INTO evidence_records (${EVIDENCE_COLUMNS.insert}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    party: db.prepare('INSERT OR IGNORE INTO evidence_parties (party, record) VALUES (?, ?)'),
    totals: db.prepare<[], Totals>("SELECT count, bytes FROM totals WHERE name = 'evidence'"),
    addTotals: db.prepare("UPDATE totals SET count = count + ?, bytes = bytes + ? WHERE name = 'evidence'"),
    caseOf: db
      .prepare<[string, string], string>('SELECT record FROM evidence_cases WHERE message_id = ? AND sender = ?')
      .pluck(),
    insertCase: db.prepare(
      'INSERT OR IGNORE INTO evidence_cases (message_id, sender, expires_at, record) VALUES (?, ?, ?, ?)',
    ),
    byMessage: db.prepare<[string, string, number, number], Row>(
      `SELECT ${EVIDENCE_COLUMNS.read} FROM evidence_records AS r WHERE ${BY_MESSAGE} AND r.seq > ? ORDER BY r.seq LIMIT ?`,
    ),
    countByMessage: db
      .prepare<[string, string], number>(`SELECT count(*) FROM evidence_records AS r WHERE ${BY_MESSAGE}`)
      .pluck(),
    bySession: db.prepare<[string, number, number, string, number, number], Row>(
      `SELECT ${EVIDENCE_COLUMNS.read} FROM evidence_records AS r WHERE ${BY_SESSION} AND r.seq > ? ORDER BY r.seq LIMIT ?`,
    ),
    countBySession: db
      .prepare<[string, number, number, string], number>(
        `SELECT count(*) FROM evidence_records AS r WHERE ${BY_SESSION}`,
      )
      .pluck(),
    expired: db.prepare<[number, number], { seq: number; bytes: number }>(
      'SELECT seq, bytes FROM evidence_records WHERE expires_at <= ? LIMIT ?',
    ),
    deleteRecord: db.prepare('DELETE FROM evidence_records WHERE seq = ?'),
    deleteParties: db.prepare('DELETE FROM evidence_parties WHERE record = ?'),
    sweepCases: db.prepare(
      'DELETE FROM evidence_cases WHERE rowid IN (SELECT rowid FROM evidence_cases WHERE expires_at <= ? LIMIT ?)',
    ),
    cases: db.prepare<[], number>('SELECT count(*) FROM evidence_cases').pluck(),
    oldest: db.prepare<[], number | null>('SELECT min(event_time) FROM evidence_records').pluck(),
  };
}

/**
 * The evidence repository on the relay's SQLite file: records in `seq` order (AUTOINCREMENT: never
 * reused), their parties indexed for reads, the running count and bytes in `totals`; writes go
 * through the shared `WriteQueue` (the cap check and the insert in one transaction).
 */
export class SqliteEvidenceStore implements EvidenceStore {
  readonly limits: EvidenceLimits;
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, limits: Partial<EvidenceLimits> = {}) {
    this.limits = checkEvidenceLimits(limits);
    this.#writer = writer;
    this.#s = statements(db);
  }

  async open(evidenceCase: EvidenceCase): Promise<'opened' | 'exists'> {
    this.#open();
    const c = checkCase(evidenceCase);
    const s = this.#s;
    return this.#writer.run(() =>
      s.insertCase.run(c.messageId, c.sender, c.expiresAt, JSON.stringify(c)).changes === 1 ? 'opened' : 'exists',
    );
  }

  async caseOf(messageId: string, sender: string): Promise<EvidenceCase | undefined> {
    this.#open();
    const text = this.#s.caseOf.get(messageId, sender);
    return text === undefined ? undefined : decodeCase(text);
  }

  async add(entry: EvidenceEntry): Promise<'stored' | 'exists' | 'full'> {
    this.#open();
    const e = checkEntry(entry);
    const s = this.#s;
    return this.#writer.run(() => {
      if (s.has.get(e.id) !== undefined) return 'exists';
      if (s.totals.get()!.count >= this.limits.maxRecords) return 'full';
      this.#insert(e);
      return 'stored';
    });
  }

  async get(id: string): Promise<EvidenceEntry | undefined> {
    this.#open();
    const row = this.#s.get.get(id);
    return row && entryOf(row);
  }

  async find(query: EvidenceQuery, party: string, cursor: string | undefined, limit: number): Promise<EvidencePage> {
    this.#open();
    const q: CheckedQuery = checkQuery(query, party);
    const after = cursorOf(cursor);
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const s = this.#s;
    const [rows, total] =
      'messageId' in q
        ? [s.byMessage.all(q.messageId, party, after, n + 1), s.countByMessage.get(q.messageId, party)!]
        : [
            s.bySession.all(q.sessionId, q.since, q.until, party, after, n + 1),
            s.countBySession.get(q.sessionId, q.since, q.until, party)!,
          ];
    const page = rows.slice(0, n);
    return { entries: page.map(entryOf), total, next: rows.length > n ? String(page.at(-1)!.seq) : undefined };
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    const s = this.#s;
    return this.#writer.run(() => {
      const expired = s.expired.all(now, n);
      let bytes = 0;
      for (const { seq, bytes: b } of expired) {
        s.deleteParties.run(seq);
        s.deleteRecord.run(seq);
        bytes += b;
      }
      if (expired.length > 0) s.addTotals.run(-expired.length, -bytes);
      const cases = expired.length < n ? s.sweepCases.run(now, n - expired.length).changes : 0;
      return expired.length + cases;
    });
  }

  async totals(): Promise<Totals> {
    this.#open();
    const { count, bytes } = this.#s.totals.get()!;
    return { count, bytes };
  }

  async overview(): Promise<EvidenceOverview> {
    const { count, bytes } = await this.totals();
    return { records: count, bytes, cases: this.#s.cases.get()!, oldestAt: this.#s.oldest.get() ?? undefined };
  }

  /** Inside a write transaction: the row, its parties and the totals. */
  #insert(e: EvidenceEntry): void {
    const s = this.#s;
    const bytes = utf8Length(e.body);
    const { lastInsertRowid } = s.insert.run(...evidenceRowValues(e, JSON.stringify(e.parties), bytes));
    for (const party of e.parties) s.party.run(party, lastInsertRowid);
    s.addTotals.run(1, bytes);
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }
}

function entryOf(row: Row): EvidenceEntry {
  return evidenceEntryOf({ ...row, parties: JSON.parse(row.parties) as string[] });
}
