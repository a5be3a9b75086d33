// The OHAN box's prepared SQLite statements and the one event row they insert.
import type BetterSqlite3 from 'better-sqlite3';
import type { BoxEventRecord } from '../contracts/box-input.js';
import type { Lane } from '../contracts/box-store.js';
import type { Totals } from '../contracts/totals.js';

/** A stored event as the rules see it: enough to take it out of every total. */
export interface EventRef {
  rowid: number;
  recipient: string;
  sender: string;
  size: number;
}

const LANE_CODE: Record<Lane, number> = { contact: 0, stranger: 1 };
const REF = 'rowid, recipient, sender, size';

/** The box's prepared statements (typed by hand: an inferred type would name better-sqlite3's internal namespace, which declarations cannot). */
export interface BoxStatements {
  readonly hasEvent: BetterSqlite3.Statement<[string], number>;
  readonly hasCard: BetterSqlite3.Statement<[string], number>;
  readonly isContact: BetterSqlite3.Statement<[string, string], number>;
  readonly pair: BetterSqlite3.Statement<[string, string], Totals>;
  readonly sender: BetterSqlite3.Statement<[string], Totals>;
  readonly recipient: BetterSqlite3.Statement<[string], Totals>;
  readonly box: BetterSqlite3.Statement<[], Totals>;
  readonly weakestStranger: BetterSqlite3.Statement<[string, number], EventRef>;
  readonly largestOtherSender: BetterSqlite3.Statement<[string, string], string>;
  readonly oldestOfPair: BetterSqlite3.Statement<[string, string], EventRef>;
  readonly largestOtherSenderInBox: BetterSqlite3.Statement<[string], { sender: string; bytes: number }>;
  readonly oldestOfSender: BetterSqlite3.Statement<[string], EventRef>;
  readonly deleteRow: BetterSqlite3.Statement;
  readonly deleteId: BetterSqlite3.Statement<[string, string], EventRef>;
  readonly expired: BetterSqlite3.Statement<[number, number], EventRef>;
  readonly nextSeq: BetterSqlite3.Statement<[string, number], number>;
  readonly insert: BetterSqlite3.Statement;
  readonly insertNew: BetterSqlite3.Statement;
  readonly savepoint: BetterSqlite3.Statement;
  readonly rollbackTo: BetterSqlite3.Statement;
  readonly release: BetterSqlite3.Statement;
  readonly addSender: BetterSqlite3.Statement;
  readonly addPair: BetterSqlite3.Statement;
  readonly addBox: BetterSqlite3.Statement;
  readonly subRecipient: BetterSqlite3.Statement;
  readonly subSender: BetterSqlite3.Statement;
  readonly dropSender: BetterSqlite3.Statement;
  readonly subPair: BetterSqlite3.Statement;
  readonly dropPair: BetterSqlite3.Statement;
  readonly page: BetterSqlite3.Statement<[string, number, number, number], { seq: number; body: string }>;
  readonly clearAllow: BetterSqlite3.Statement;
  readonly addAllow: BetterSqlite3.Statement;
  readonly allow: BetterSqlite3.Statement<[string], string>;
  readonly cardTs: BetterSqlite3.Statement<[string], number>;
  readonly putCard: BetterSqlite3.Statement;
  readonly refreshCard: BetterSqlite3.Statement;
  readonly card: BetterSqlite3.Statement<[string, number], string>;
  readonly cardCount: BetterSqlite3.Statement<[], number>;
  readonly addCards: BetterSqlite3.Statement;
  readonly knows: BetterSqlite3.Statement<[string, number, string, string], number>;
  readonly holdsAny: BetterSqlite3.Statement<[string, number, string, string, string], number>;
  readonly expiredCards: BetterSqlite3.Statement<[number, number]>;
}

export function boxStatements(db: BetterSqlite3.Database): BoxStatements {
  return {
    hasEvent: db.prepare<[string], number>('SELECT 1 FROM ohan_events WHERE id = ?').pluck(),
    hasCard: db.prepare<[string], number>('SELECT 1 FROM ohan_cards WHERE key = ?').pluck(),
    isContact: db
      .prepare<[string, string], number>('SELECT 1 FROM ohan_allow WHERE recipient = ? AND contact = ?')
      .pluck(),
    pair: db.prepare<[string, string], Totals>(
      'SELECT count, bytes FROM ohan_pairs WHERE recipient = ? AND sender = ?',
    ),
    sender: db.prepare<[string], Totals>('SELECT count, bytes FROM ohan_senders WHERE sender = ?'),
    recipient: db.prepare<[string], Totals>('SELECT count, bytes FROM ohan_recipients WHERE recipient = ?'),
    box: db.prepare<[], Totals>("SELECT count, bytes FROM totals WHERE name = 'ohan_box'"),
    weakestStranger: db.prepare<[string, number], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE recipient = ? AND lane = 1 AND strength <= ?
       ORDER BY strength, rowid LIMIT 1`,
    ),
    largestOtherSender: db
      .prepare<[string, string], string>(
        `SELECT sender FROM ohan_pairs WHERE recipient = ? AND sender <> ? AND bytes > 0
       ORDER BY bytes DESC, sender LIMIT 1`,
      )
      .pluck(),
    oldestOfPair: db.prepare<[string, string], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE recipient = ? AND sender = ? ORDER BY rowid LIMIT 1`,
    ),
    largestOtherSenderInBox: db.prepare<[string], { sender: string; bytes: number }>(
      'SELECT sender, bytes FROM ohan_senders WHERE sender <> ? AND bytes > 0 ORDER BY bytes DESC, sender LIMIT 1',
    ),
    oldestOfSender: db.prepare<[string], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE sender = ? ORDER BY rowid LIMIT 1`,
    ),
    deleteRow: db.prepare('DELETE FROM ohan_events WHERE rowid = ?'),
    deleteId: db.prepare<[string, string], EventRef>(
      'DELETE FROM ohan_events WHERE recipient = ? AND id = ? RETURNING rowid, recipient, sender, size',
    ),
    expired: db.prepare<[number, number], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE expires_at <= ? ORDER BY expires_at, rowid LIMIT ?`,
    ),
    nextSeq: db
      .prepare<[string, number], number>(
        `INSERT INTO ohan_recipients (recipient, next_seq, count, bytes) VALUES (?, 2, 1, ?)
       ON CONFLICT (recipient) DO UPDATE SET next_seq = next_seq + 1, count = count + 1, bytes = bytes + excluded.bytes
       RETURNING next_seq - 1`,
      )
      .pluck(),
    insert: db.prepare(INSERT_EVENT),
    // The fast path's only statement: an id already stored inserts nothing (the answer is "exists").
    insertNew: db.prepare(`${INSERT_EVENT} ON CONFLICT (id) DO NOTHING`),
    savepoint: db.prepare('SAVEPOINT box_admit'),
    rollbackTo: db.prepare('ROLLBACK TO box_admit'),
    release: db.prepare('RELEASE box_admit'),
    addSender: db.prepare(
      `INSERT INTO ohan_senders (sender, count, bytes) VALUES (?, 1, ?)
       ON CONFLICT (sender) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes`,
    ),
    addPair: db.prepare(
      `INSERT INTO ohan_pairs (recipient, sender, count, bytes) VALUES (?, ?, 1, ?)
       ON CONFLICT (recipient, sender) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes`,
    ),
    addBox: db.prepare("UPDATE totals SET count = count + ?, bytes = bytes + ? WHERE name = 'ohan_box'"),
    subRecipient: db.prepare('UPDATE ohan_recipients SET count = count - ?, bytes = bytes - ? WHERE recipient = ?'),
    // Sender and pair rows go when they reach zero: they only exist for what is stored.
    subSender: db.prepare('UPDATE ohan_senders SET count = count - ?, bytes = bytes - ? WHERE sender = ?'),
    dropSender: db.prepare('DELETE FROM ohan_senders WHERE sender = ? AND count <= 0'),
    subPair: db.prepare(
      'UPDATE ohan_pairs SET count = count - ?, bytes = bytes - ? WHERE recipient = ? AND sender = ?',
    ),
    dropPair: db.prepare('DELETE FROM ohan_pairs WHERE recipient = ? AND sender = ? AND count <= 0'),
    page: db.prepare<[string, number, number, number], { seq: number; body: string }>(
      'SELECT seq, body FROM ohan_events WHERE recipient = ? AND seq > ? AND expires_at > ? ORDER BY seq LIMIT ?',
    ),
    clearAllow: db.prepare('DELETE FROM ohan_allow WHERE recipient = ?'),
    addAllow: db.prepare('INSERT INTO ohan_allow (recipient, contact) VALUES (?, ?)'),
    allow: db.prepare<[string], string>('SELECT contact FROM ohan_allow WHERE recipient = ? ORDER BY rowid').pluck(),
    cardTs: db.prepare<[string], number>('SELECT ts FROM ohan_cards WHERE key = ?').pluck(),
    putCard: db.prepare(
      `INSERT INTO ohan_cards (key, ts, body, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET ts = excluded.ts, body = excluded.body, expires_at = excluded.expires_at`,
    ),
    refreshCard: db.prepare('UPDATE ohan_cards SET expires_at = max(expires_at, ?) WHERE key = ?'),
    card: db.prepare<[string, number], string>('SELECT body FROM ohan_cards WHERE key = ? AND expires_at > ?').pluck(),
    cardCount: db.prepare<[], number>("SELECT count FROM totals WHERE name = 'ohan_cards'").pluck(),
    addCards: db.prepare("UPDATE totals SET count = count + ? WHERE name = 'ohan_cards'"),
    knows: db
      .prepare<[string, number, string, string], number>(
        `SELECT EXISTS (SELECT 1 FROM ohan_cards WHERE key = ? AND expires_at > ?)
         OR EXISTS (SELECT 1 FROM ohan_recipients WHERE recipient = ? AND count > 0)
         OR EXISTS (SELECT 1 FROM ohan_senders WHERE sender = ? AND count > 0)`,
      )
      .pluck(),
    holdsAny: db
      .prepare<[string, number, string, string, string], number>(
        `SELECT EXISTS (SELECT 1 FROM ohan_cards WHERE key = ? AND expires_at > ?)
         OR EXISTS (SELECT 1 FROM ohan_recipients WHERE recipient = ? AND count > 0)
         OR EXISTS (SELECT 1 FROM ohan_senders WHERE sender = ? AND count > 0)
         OR EXISTS (SELECT 1 FROM ohan_allow WHERE recipient = ?)`,
      )
      .pluck(),
    expiredCards: db.prepare<[number, number]>(
      'DELETE FROM ohan_cards WHERE rowid IN (SELECT rowid FROM ohan_cards WHERE expires_at <= ? LIMIT ?)',
    ),
  };
}

/** The one event insert; `eventRow` binds its columns in order. */
const INSERT_EVENT = `INSERT INTO ohan_events (recipient, seq, id, sender, lane, strength, expires_at, size, body, stored_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export function eventRow(record: BoxEventRecord, lane: Lane, seq: number) {
  return [
    record.recipient,
    seq,
    record.id,
    record.sender,
    LANE_CODE[lane],
    record.strength,
    record.expiresAt,
    record.size,
    record.json,
    Date.now(),
  ] as const;
}
