import { utf8Length } from '@wmp/jsonrpc-envelope';
import { checkCase, checkEntry, checkQuery, cursorOf, decodeCase } from '../contracts/evidence-input.js';
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
import type { PostgresDatabase } from './postgres-database.js';
import type { WriteTx } from './write-tx.js';

const TOTALS = 'evidence';

const BY_MESSAGE = 'message_id = $1 AND $2 = ANY(parties)';
const BY_SESSION = 'session_id = $1 AND event_time >= $2 AND event_time <= $3 AND $4 = ANY(parties)';

const SQL = {
  get: `SELECT ${EVIDENCE_COLUMNS.read} FROM evidence_records WHERE id = $1`,
  has: 'SELECT 1 FROM evidence_records WHERE id = $1',
  // A record another node inserted since the check is `exists` here (nothing returned).
  insert: `INSERT INTO evidence_records (${EVIDENCE_COLUMNS.insert}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT (id) DO NOTHING RETURNING seq`,
  caseOf: 'SELECT record FROM evidence_cases WHERE message_id = $1 AND sender = $2',
  insertCase: `INSERT INTO evidence_cases (message_id, sender, expires_at, record) VALUES ($1, $2, $3, $4)
               ON CONFLICT (message_id, sender) DO NOTHING RETURNING 1 AS opened`,
  byMessage: `SELECT ${EVIDENCE_COLUMNS.read} FROM evidence_records WHERE ${BY_MESSAGE} AND seq > $3 ORDER BY seq LIMIT $4`,
  countByMessage: `SELECT count(*)::bigint AS n FROM evidence_records WHERE ${BY_MESSAGE}`,
  bySession: `SELECT ${EVIDENCE_COLUMNS.read} FROM evidence_records WHERE ${BY_SESSION} AND seq > $5 ORDER BY seq LIMIT $6`,
  countBySession: `SELECT count(*)::bigint AS n FROM evidence_records WHERE ${BY_SESSION}`,
  sweepRecords: `DELETE FROM evidence_records WHERE seq = ANY(ARRAY(
                   SELECT seq FROM evidence_records WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED))
                 RETURNING bytes`,
  sweepCases: `DELETE FROM evidence_cases WHERE ctid = ANY(ARRAY(
                 SELECT ctid FROM evidence_cases WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED))`,
  totals: `SELECT count, bytes FROM wmp_totals WHERE name = '${TOTALS}'`,
  cases: 'SELECT count(*)::bigint AS n FROM evidence_cases',
  oldest: 'SELECT min(event_time) AS oldest FROM evidence_records',
} as const;

/**
 * The evidence repository on PostgreSQL, shared by every node: inserts are idempotent on the
 * record id (and a case on its message and sender) whichever node makes them, and the record cap
 * is a totals row checked in the transaction of each insert. Reads are on the pool.
 */
export class PostgresEvidenceStore implements EvidenceStore {
  readonly limits: EvidenceLimits;
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase, limits: Partial<EvidenceLimits> = {}) {
    this.limits = checkEvidenceLimits(limits);
    this.#db = db;
  }

  async open(evidenceCase: EvidenceCase): Promise<'opened' | 'exists'> {
    this.#open();
    const c = checkCase(evidenceCase);
    // Of two nodes opening one case, one inserts the row; the other finds it (nothing returned).
    return this.#db.writer.run({
      atomic: true,
      run: async (tx) => {
        const { rows } = await tx.query(
          SQL.insertCase,
          [c.messageId, c.sender, c.expiresAt, JSON.stringify(c)],
          'wmp_evidence_open',
        );
        return rows.length === 1 ? 'opened' : 'exists';
      },
    });
  }

  async caseOf(messageId: string, sender: string): Promise<EvidenceCase | undefined> {
    this.#open();
    const row = (await this.#db.read<{ record: string }>(SQL.caseOf, [messageId, sender], 'wmp_evidence_case'))[0];
    return row === undefined ? undefined : decodeCase(row.record);
  }

  async add(entry: EvidenceEntry): Promise<'stored' | 'exists' | 'full'> {
    this.#open();
    const e = checkEntry(entry);
    return this.#db.writer.run({ run: (tx) => this.#insert(tx, e) });
  }

  async get(id: string): Promise<EvidenceEntry | undefined> {
    this.#open();
    const row = (await this.#db.read<EvidenceRow>(SQL.get, [id], 'wmp_evidence_get'))[0];
    return row && evidenceEntryOf(row);
  }

  async find(query: EvidenceQuery, party: string, cursor: string | undefined, limit: number): Promise<EvidencePage> {
    this.#open();
    const q = checkQuery(query, party);
    const after = cursorOf(cursor);
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const [rows, counted] =
      'messageId' in q
        ? await Promise.all([
            this.#db.read<EvidenceRow>(SQL.byMessage, [q.messageId, party, after, n + 1], 'wmp_evidence_by_message'),
            this.#db.read<{ n: number }>(SQL.countByMessage, [q.messageId, party], 'wmp_evidence_count'),
          ])
        : await Promise.all([
            this.#db.read<EvidenceRow>(
              SQL.bySession,
              [q.sessionId, q.since, q.until, party, after, n + 1],
              'wmp_evidence_by_session',
            ),
            this.#db.read<{ n: number }>(
              SQL.countBySession,
              [q.sessionId, q.since, q.until, party],
              'wmp_evidence_count',
            ),
          ]);
    const page = rows.slice(0, n);
    return {
      entries: page.map(evidenceEntryOf),
      total: Number(counted[0]!.n),
      next: rows.length > n ? String(page.at(-1)!.seq) : undefined,
    };
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#db.writer.run({
      alone: true,
      run: async (tx) => {
        const totals = await tx.totals();
        const { rows } = await tx.query<{ bytes: number }>(SQL.sweepRecords, [now, n], 'wmp_evidence_sweep');
        totals.add(TOTALS, -rows.length, -rows.reduce((sum, r) => sum + r.bytes, 0));
        if (rows.length >= n) return rows.length;
        const cases = (await tx.query(SQL.sweepCases, [now, n - rows.length], 'wmp_evidence_sweep_cases')).rowCount;
        return rows.length + (cases ?? 0);
      },
    });
  }

  async totals(): Promise<Totals> {
    this.#open();
    const row = (await this.#db.read<Totals>(SQL.totals, [], 'wmp_evidence_totals'))[0]!;
    return { count: row.count, bytes: row.bytes };
  }

  async overview(): Promise<EvidenceOverview> {
    const [{ count, bytes }, cases, oldest] = await Promise.all([
      this.totals(),
      this.#db.read<{ n: number }>(SQL.cases, [], 'wmp_evidence_cases'),
      this.#db.read<{ oldest: number | null }>(SQL.oldest, [], 'wmp_evidence_oldest'),
    ]);
    return { records: count, bytes, cases: Number(cases[0]!.n), oldestAt: oldest[0]!.oldest ?? undefined };
  }

  /** Inside a write transaction: the record and the totals, under the cap. */
  async #insert(tx: WriteTx, e: EvidenceEntry): Promise<'stored' | 'exists' | 'full'> {
    if ((await tx.query(SQL.has, [e.id], 'wmp_evidence_has')).rows.length > 0) return 'exists';
    const totals = await tx.totals();
    if (!totals.fits(TOTALS, 'count', 1, this.limits.maxRecords)) return 'full';
    const bytes = utf8Length(e.body);
    const { rows } = await tx.query(SQL.insert, evidenceRowValues(e, e.parties, bytes), 'wmp_evidence_insert');
    if (rows.length === 0) return 'exists';
    totals.add(TOTALS, 1, bytes);
    return 'stored';
  }

  #open(): void {
    if (this.#db.closed) throw new StoreClosedError();
  }
}
