import type { OhanCard, OhanEvent, StoredEvent } from '@wmp/ohan-seal';
import type { Pool, PoolClient } from 'pg';
import { allowList, type BoxEventRecord, boxEventRecord, cardTime } from '../contracts/box-input.js';
import { checkBoxLimits } from '../contracts/box-limits.js';
import { type AsyncBoxLedger, admitEventAsync } from '../contracts/box-rules.js';
import type {
  BoxLimits,
  BoxStore,
  CardResult,
  FetchPage,
  FetchPageText,
  Lane,
  PublishResult,
} from '../contracts/box-store.js';
import { checkIds, checkSeq, clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { StoreClosedError, StoreWriteError } from '../errors.js';
import { BoxBatch, type PublishFacts } from './postgres-box-batch.js';
import { OHAN_LOCK_CLASS } from './postgres-box-schema.js';
import {
  type BoxStatement,
  type BoxTx,
  BoxWriter,
  type BoxWriterOptions,
  type BoxWriterStats,
} from './postgres-box-writer.js';

/** A stored event as the rules see it: enough to delete it and take it out of every total. */
interface Victim {
  readonly id: string;
  readonly recipient: string;
  readonly sender: string;
  readonly size: number;
}

const LANE_CODE: Record<Lane, number> = { contact: 0, stranger: 1 };
const NO_EXPIRY_FILTER = Number.MIN_SAFE_INTEGER;
/** Allow lists lock `(ALLOW_LOCK_CLASS, hashtext(recipient))` while they are replaced. */
const ALLOW_LOCK_CLASS = OHAN_LOCK_CLASS + 1;

// bigint columns are read as float8 (exact below 2^53: counts, bytes, seqs, ms times), so the
// answers are numbers whatever type parsers the pool was given.
const VICTIM = 'id, recipient, sender, size';

const statement = (name: string, text: string): BoxStatement => ({ name: `ohan_box_${name}`, text });

/**
 * Deletes what `gone` (a DELETE ... RETURNING recipient, sender, size) removed from every total,
 * in the same statement: recipient rows stay, sender and pair rows that reach 0 go. Answers the
 * number of events removed.
 */
function subtracting(name: string, deleteSql: string): BoxStatement {
  return statement(
    name,
    `WITH gone AS (${deleteSql} RETURNING recipient, sender, size),
      r AS (SELECT recipient, count(*) AS n, sum(size) AS b FROM gone GROUP BY recipient),
      s AS (SELECT sender, count(*) AS n, sum(size) AS b FROM gone GROUP BY sender),
      p AS (SELECT recipient, sender, count(*) AS n, sum(size) AS b FROM gone GROUP BY recipient, sender),
      ur AS (UPDATE ohan_recipients t SET count = t.count - r.n, bytes = t.bytes - r.b FROM r
             WHERE t.recipient = r.recipient),
      ds AS (DELETE FROM ohan_senders t USING s WHERE t.sender = s.sender AND t.count <= s.n),
      us AS (UPDATE ohan_senders t SET count = t.count - s.n, bytes = t.bytes - s.b FROM s
             WHERE t.sender = s.sender AND t.count > s.n),
      dp AS (DELETE FROM ohan_pairs t USING p WHERE t.recipient = p.recipient AND t.sender = p.sender
             AND t.count <= p.n),
      up AS (UPDATE ohan_pairs t SET count = t.count - p.n, bytes = t.bytes - p.b FROM p
             WHERE t.recipient = p.recipient AND t.sender = p.sender AND t.count > p.n),
      ub AS (UPDATE ohan_box_totals SET count = count - (SELECT count(*) FROM gone),
             bytes = bytes - (SELECT coalesce(sum(size), 0) FROM gone)
             WHERE id = 1 AND EXISTS (SELECT 1 FROM gone))
    SELECT count(*)::int AS n FROM gone`,
  );
}

const SQL = {
  // Everything the rules read for the common publish, in one round trip, with the recipient,
  // sender and pair rows locked in that order (first referenced in the select list; the box
  // totals row is locked already). A row that does not exist yet cannot be locked, and need not
  // be: only a box writer creates it, and every box writer holds the box totals row.
  facts: statement(
    'facts',
    `WITH r AS (SELECT count, bytes FROM ohan_recipients WHERE recipient = $2 FOR UPDATE),
      s AS (SELECT count, bytes FROM ohan_senders WHERE sender = $3 FOR UPDATE),
      p AS (SELECT count, bytes FROM ohan_pairs WHERE recipient = $2 AND sender = $3 FOR UPDATE)
    SELECT
      EXISTS (SELECT 1 FROM ohan_events WHERE id = $1) AS known,
      EXISTS (SELECT 1 FROM ohan_cards WHERE key = $2) AS recipient_card,
      EXISTS (SELECT 1 FROM ohan_cards WHERE key = $3) AS sender_card,
      EXISTS (SELECT 1 FROM ohan_allow WHERE recipient = $2 AND contact = $3) AS contact,
      b.count::float8 AS box_count, b.bytes::float8 AS box_bytes,
      coalesce((SELECT count FROM r), 0)::float8 AS r_count, coalesce((SELECT bytes FROM r), 0)::float8 AS r_bytes,
      coalesce((SELECT count FROM s), 0)::float8 AS s_count, coalesce((SELECT bytes FROM s), 0)::float8 AS s_bytes,
      coalesce((SELECT count FROM p), 0)::float8 AS p_count, coalesce((SELECT bytes FROM p), 0)::float8 AS p_bytes
    FROM ohan_box_totals b WHERE b.id = 1`,
  ),
  hasEvent: statement('has_event', 'SELECT 1 FROM ohan_events WHERE id = $1'),
  hasCard: statement('has_card', 'SELECT 1 FROM ohan_cards WHERE key = $1'),
  isContact: statement('is_contact', 'SELECT 1 FROM ohan_allow WHERE recipient = $1 AND contact = $2'),
  pair: statement(
    'pair',
    'SELECT count::float8 AS count, bytes::float8 AS bytes FROM ohan_pairs WHERE recipient = $1 AND sender = $2',
  ),
  sender: statement(
    'sender',
    'SELECT count::float8 AS count, bytes::float8 AS bytes FROM ohan_senders WHERE sender = $1',
  ),
  recipient: statement(
    'recipient',
    'SELECT count::float8 AS count, bytes::float8 AS bytes FROM ohan_recipients WHERE recipient = $1',
  ),
  box: statement('box', 'SELECT count::float8 AS count, bytes::float8 AS bytes FROM ohan_box_totals WHERE id = 1'),
  // Victim searches skip the publish's earlier victims ($n: their ids), which are deleted only
  // when the publish is stored.
  weakestStranger: statement(
    'weakest_stranger',
    `SELECT ${VICTIM} FROM ohan_events WHERE recipient = $1 AND lane = 1 AND strength <= $2::int
       AND id <> ALL($3::text[])
     ORDER BY strength, pos LIMIT 1`,
  ),
  largestOtherSenders: statement(
    'largest_other_senders',
    `SELECT sender, bytes::float8 AS bytes FROM ohan_pairs WHERE recipient = $1 AND sender <> $2 AND bytes > 0
     ORDER BY bytes DESC, sender LIMIT $3::int`,
  ),
  oldestOfPair: statement(
    'oldest_of_pair',
    `SELECT ${VICTIM} FROM ohan_events WHERE recipient = $1 AND sender = $2 AND id <> ALL($3::text[])
     ORDER BY pos LIMIT 1`,
  ),
  largestOtherSendersInBox: statement(
    'largest_other_senders_in_box',
    `SELECT sender, bytes::float8 AS bytes FROM ohan_senders WHERE sender <> $1 AND bytes > 0
     ORDER BY bytes DESC, sender LIMIT $2::int`,
  ),
  oldestOfSender: statement(
    'oldest_of_sender',
    `SELECT ${VICTIM} FROM ohan_events WHERE sender = $1 AND id <> ALL($2::text[]) ORDER BY pos LIMIT 1`,
  ),
  // The event and every total in one statement: the recipient row's next seq is the event's.
  insert: statement(
    'insert',
    `WITH r AS (
        INSERT INTO ohan_recipients AS t (recipient, next_seq, count, bytes) VALUES ($1::text, 2, 1, $7::int)
        ON CONFLICT (recipient) DO UPDATE
          SET next_seq = t.next_seq + 1, count = t.count + 1, bytes = t.bytes + excluded.bytes
        RETURNING t.next_seq - 1 AS seq
      ),
      e AS (
        INSERT INTO ohan_events (recipient, seq, id, sender, lane, strength, expires_at, size, body)
        SELECT $1::text, r.seq, $2::text, $3::text, $4::smallint, $5::smallint, $6::bigint, $7::int, $8::text FROM r
      ),
      s AS (
        INSERT INTO ohan_senders AS t (sender, count, bytes) VALUES ($3::text, 1, $7::int)
        ON CONFLICT (sender) DO UPDATE SET count = t.count + 1, bytes = t.bytes + excluded.bytes
      ),
      p AS (
        INSERT INTO ohan_pairs AS t (recipient, sender, count, bytes) VALUES ($1::text, $3::text, 1, $7::int)
        ON CONFLICT (recipient, sender) DO UPDATE SET count = t.count + 1, bytes = t.bytes + excluded.bytes
      ),
      b AS (UPDATE ohan_box_totals SET count = count + 1, bytes = bytes + $7::int WHERE id = 1)
    SELECT seq::float8 AS seq FROM r`,
  ),
  removeMany: subtracting('remove_many', 'DELETE FROM ohan_events WHERE id = ANY($1::text[])'),
  delivered: subtracting('delivered', 'DELETE FROM ohan_events WHERE recipient = $1 AND id = ANY($2::text[])'),
  expired: subtracting(
    'expired',
    `DELETE FROM ohan_events WHERE id IN
       (SELECT id FROM ohan_events WHERE expires_at <= $1::bigint ORDER BY expires_at, pos LIMIT $2::int)`,
  ),
  page: statement(
    'page',
    `SELECT seq::float8 AS seq, body FROM ohan_events
     WHERE recipient = $1 AND seq > $2::bigint AND expires_at > $3::bigint ORDER BY seq LIMIT $4::int`,
  ),
  knows: statement(
    'knows',
    `SELECT EXISTS (SELECT 1 FROM ohan_cards WHERE key = $1 AND expires_at > $2::bigint)
         OR EXISTS (SELECT 1 FROM ohan_recipients WHERE recipient = $1 AND count > 0)
         OR EXISTS (SELECT 1 FROM ohan_senders WHERE sender = $1 AND count > 0) AS known`,
  ),
  allow: statement('allow', 'SELECT contact FROM ohan_allow WHERE recipient = $1 ORDER BY position'),
  card: statement('card', 'SELECT body FROM ohan_cards WHERE key = $1 AND expires_at > $2::bigint'),
  cardCount: statement('card_count', 'SELECT count::float8 AS count FROM ohan_card_totals WHERE id = 1'),
} as const;

/** What the facts query answers. */
interface FactsRow {
  known: boolean;
  recipient_card: boolean;
  sender_card: boolean;
  contact: boolean;
  box_count: number;
  box_bytes: number;
  r_count: number;
  r_bytes: number;
  s_count: number;
  s_bytes: number;
  p_count: number;
  p_bytes: number;
}

function factsOf(row: FactsRow): PublishFacts {
  return {
    known: row.known,
    recipientCard: row.recipient_card,
    senderCard: row.sender_card,
    contact: row.contact,
    box: { count: row.box_count, bytes: row.box_bytes },
    recipient: { count: row.r_count, bytes: row.r_bytes },
    sender: { count: row.s_count, bytes: row.s_bytes },
    pair: { count: row.p_count, bytes: row.p_bytes },
  };
}

const minus = (t: Totals, removed: Totals | undefined): Totals =>
  removed === undefined ? t : { count: t.count - removed.count, bytes: t.bytes - removed.bytes };

/** Adds one event of `size` bytes to the removed totals of `key`. */
function note(map: Map<string, { count: number; bytes: number }>, key: string, size: number): void {
  const t = map.get(key);
  if (t === undefined) map.set(key, { count: 1, bytes: size });
  else {
    t.count++;
    t.bytes += size;
  }
}

/**
 * The ledger of one publish (`admitEventAsync`). The facts about the event's own recipient,
 * sender and pair and the box's come with the publish (read under their locks), so the common
 * publish asks the database nothing before its insert. Evictions are deferred: `remove` only
 * records the victim, later searches skip what was removed and totals subtract it, and the
 * victims are deleted in one statement just before the insert. A refused publish has then
 * deleted nothing: nothing to undo, no savepoint.
 *
 * "The sender with the most bytes" among rows some of which lost bytes to removals: the best after
 * removals is among the first (k + 1) rows in index order, k the number of senders that lost
 * bytes (one of those rows lost nothing, and it beats every row after it).
 */
class PublishLedger implements AsyncBoxLedger<Victim> {
  readonly #tx: BoxTx;
  readonly #event: BoxEventRecord;
  readonly #facts: PublishFacts;
  readonly #victims: Victim[] = [];
  readonly #victimIds: string[] = [];
  /** Count and bytes removed so far, per recipient, per sender and per pair. */
  readonly #removedFromRecipient = new Map<string, { count: number; bytes: number }>();
  readonly #removedFromSender = new Map<string, { count: number; bytes: number }>();
  readonly #removedFromPair = new Map<string, { count: number; bytes: number }>();
  #removedBytes = 0;

  constructor(tx: BoxTx, event: BoxEventRecord, facts: PublishFacts) {
    this.#tx = tx;
    this.#event = event;
    this.#facts = facts;
  }

  hasEvent(id: string): boolean | Promise<boolean> {
    return id === this.#event.id ? this.#facts.known : this.#exists(SQL.hasEvent, [id]);
  }

  hasCard(key: string): boolean | Promise<boolean> {
    if (key === this.#event.recipient) return this.#facts.recipientCard;
    if (key === this.#event.sender) return this.#facts.senderCard;
    return this.#exists(SQL.hasCard, [key]);
  }

  isContact(recipient: string, sender: string): boolean | Promise<boolean> {
    return this.#ours(recipient, sender) ? this.#facts.contact : this.#exists(SQL.isContact, [recipient, sender]);
  }

  pair(recipient: string, sender: string): Totals | Promise<Totals> {
    const removed = this.#removedFromPair.get(pairKey(recipient, sender));
    if (this.#ours(recipient, sender)) return minus(this.#facts.pair, removed);
    return this.#totals(SQL.pair, [recipient, sender]).then((t) => minus(t, removed));
  }

  sender(sender: string): Totals | Promise<Totals> {
    const removed = this.#removedFromSender.get(sender);
    if (sender === this.#event.sender) return minus(this.#facts.sender, removed);
    return this.#totals(SQL.sender, [sender]).then((t) => minus(t, removed));
  }

  recipient(recipient: string): Totals | Promise<Totals> {
    const removed = this.#removedFromRecipient.get(recipient);
    if (recipient === this.#event.recipient) return minus(this.#facts.recipient, removed);
    return this.#totals(SQL.recipient, [recipient]).then((t) => minus(t, removed));
  }

  box(): Totals {
    const { count, bytes } = this.#facts.box;
    return { count: count - this.#victims.length, bytes: bytes - this.#removedBytes };
  }

  weakestStranger(recipient: string, maxStrength: number): Promise<Victim | undefined> {
    return this.#first<Victim>(SQL.weakestStranger, [recipient, Math.min(maxStrength, 1e9), this.#victimIds]);
  }

  async largestOtherSender(recipient: string, exclude: string): Promise<string | undefined> {
    const lost = [...this.#removedFromPair.keys()].filter((k) => k.startsWith(`${recipient}\n`)).length;
    const rows = await this.#tx.query<{ sender: string; bytes: number }>(SQL.largestOtherSenders, [
      recipient,
      exclude,
      lost + 1,
    ]);
    return largest(rows, (sender) => this.#removedFromPair.get(pairKey(recipient, sender)))?.sender;
  }

  oldestOfPair(recipient: string, sender: string): Promise<Victim | undefined> {
    return this.#first<Victim>(SQL.oldestOfPair, [recipient, sender, this.#victimIds]);
  }

  async largestOtherSenderInBox(exclude: string): Promise<{ sender: string; bytes: number } | undefined> {
    const rows = await this.#tx.query<{ sender: string; bytes: number }>(SQL.largestOtherSendersInBox, [
      exclude,
      this.#removedFromSender.size + 1,
    ]);
    return largest(rows, (sender) => this.#removedFromSender.get(sender));
  }

  oldestOfSender(sender: string): Promise<Victim | undefined> {
    return this.#first<Victim>(SQL.oldestOfSender, [sender, this.#victimIds]);
  }

  remove(victim: Victim): void {
    this.#victims.push(victim);
    this.#victimIds.push(victim.id);
    note(this.#removedFromRecipient, victim.recipient, victim.size);
    note(this.#removedFromSender, victim.sender, victim.size);
    note(this.#removedFromPair, pairKey(victim.recipient, victim.sender), victim.size);
    this.#removedBytes += victim.size;
  }

  async insert(event: BoxEventRecord, lane: Lane): Promise<number> {
    if (this.#victimIds.length > 0) await this.#tx.query(SQL.removeMany, [this.#victimIds]);
    const rows = await this.#tx.query<{ seq: number }>(SQL.insert, [
      event.recipient,
      event.id,
      event.sender,
      LANE_CODE[lane],
      event.strength,
      event.expiresAt,
      event.size,
      event.json,
    ]);
    return rows[0]!.seq;
  }

  #ours(recipient: string, sender: string): boolean {
    return recipient === this.#event.recipient && sender === this.#event.sender;
  }

  async #exists(query: BoxStatement, values: readonly unknown[]): Promise<boolean> {
    return (await this.#tx.query(query, values)).length > 0;
  }

  async #totals(query: BoxStatement, values: readonly unknown[]): Promise<Totals> {
    return (await this.#first<Totals>(query, values)) ?? EMPTY_TOTALS;
  }

  async #first<R>(query: BoxStatement, values: readonly unknown[]): Promise<R | undefined> {
    return (await this.#tx.query<R>(query, values))[0];
  }
}

const pairKey = (recipient: string, sender: string) => `${recipient}\n${sender}`;

/** The row with the most bytes once `removed` is taken off (ties: lowest key), if any has bytes left. */
function largest(
  rows: readonly { sender: string; bytes: number }[],
  removed: (sender: string) => Totals | undefined,
): { sender: string; bytes: number } | undefined {
  let best: { sender: string; bytes: number } | undefined;
  for (const row of rows) {
    const bytes = row.bytes - (removed(row.sender)?.bytes ?? 0);
    if (bytes <= 0) continue;
    if (best === undefined || bytes > best.bytes || (bytes === best.bytes && row.sender < best.sender)) {
      best = { sender: row.sender, bytes };
    }
  }
  return best;
}

/** How the box's writer batches and waits (see `BoxWriterOptions`). */
export type PostgresBoxStoreOptions = BoxWriterOptions;

/** Where a transaction keeps its `BoxBatch`. */
const BATCH = {};

/** Writes the transaction's fast-path publishes, if any, before a statement reads or changes the tables. */
async function flushBatch(tx: BoxTx): Promise<void> {
  await tx.peek<BoxBatch>(BATCH)?.flush();
}

/**
 * The OHAN box on PostgreSQL, for a relay on many nodes (DESIGN §3, §4.7, §6). It is given a
 * `pg.Pool` on a database that has the box's tables (`OHAN_BOX_MIGRATIONS`, or `migrateBoxSchema`)
 * and runs its own transactions on it; the pool stays the caller's (`close` does not end it).
 *
 * Publishes, deliveries and sweeps go through the box's writer (`BoxWriter`): batches of up to
 * 100 in one transaction, in call order, acknowledged after COMMIT, each transaction holding the
 * box totals row first, so the caps hold exactly across nodes. Most publishes take the fast path
 * (`BoxBatch`): one query reads (and locks) the totals of the batch's publishes, each that needs
 * no eviction is decided by `laneWithoutEviction` from them, and one statement writes them all.
 * The others (a refusal, an eviction) run `admitEventAsync`, the §4.7 rules shared with the memory
 * and SQLite boxes, over the tables (`PublishLedger`): evictions are deferred to the insert, so a
 * refused publish has changed nothing. Totals change in the same transaction as the events.
 * Reads (fetch, stats, allow lists, cards) use the pool directly and see what committed.
 */
export class PostgresBoxStore implements BoxStore {
  readonly limits: BoxLimits;
  readonly #pool: Pool;
  readonly #writer: BoxWriter;
  #closed = false;

  constructor(pool: Pool, limits: Partial<BoxLimits> = {}, options: PostgresBoxStoreOptions = {}) {
    this.limits = checkBoxLimits(limits);
    this.#pool = pool;
    this.#writer = new BoxWriter(pool, options);
  }

  /** Group-commit figures of the box's writer. */
  get writeStats(): BoxWriterStats {
    return this.#writer.stats;
  }

  async publish(event: OhanEvent, json?: string): Promise<PublishResult> {
    this.#open();
    const record = boxEventRecord(event, json);
    return this.#writer.run((tx) => this.#admit(tx, record), record);
  }

  async #admit(tx: BoxTx, record: BoxEventRecord): Promise<PublishResult> {
    if (tx.fast) {
      const batch = tx.local(BATCH, () => {
        const made = new BoxBatch(tx, this.limits);
        tx.beforeCommit(() => made.flush());
        return made;
      });
      const upcoming = tx.upcoming().filter((tag): tag is BoxEventRecord => tag !== undefined);
      const decided = await batch.decide(record, upcoming);
      if ('result' in decided) return decided.result;
      // An eviction or a refusal: the rules run over the tables, which must hold the batch's events.
      await batch.flush();
      return this.#admitByRules(tx, record, decided.facts);
    }
    const [row] = await tx.query<FactsRow>(SQL.facts, [record.id, record.recipient, record.sender]);
    return this.#admitByRules(tx, record, factsOf(row!));
  }

  /** Refusals and evictions: `admitEventAsync` over the tables (a refusal has changed nothing). */
  async #admitByRules(tx: BoxTx, record: BoxEventRecord, facts: PublishFacts): Promise<PublishResult> {
    return admitEventAsync(new PublishLedger(tx, record, facts), record, this.limits);
  }

  async fetch(recipient: string, after: number, limit: number, now?: number): Promise<FetchPage> {
    const page = await this.fetchText(recipient, after, limit, now);
    const events = page.items.map((i): StoredEvent => ({ ...(JSON.parse(i.json) as OhanEvent), seq: i.seq }));
    return { events, next: page.next, more: page.more };
  }

  async fetchText(recipient: string, after: number, limit: number, now?: number): Promise<FetchPageText> {
    this.#open();
    checkSeq(after, 'after');
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const rows = await this.#read<{ seq: number; body: string }>(SQL.page, [
      recipient,
      after,
      now ?? NO_EXPIRY_FILTER,
      n + 1,
    ]);
    const items = rows.slice(0, n).map((row) => ({ seq: row.seq, json: row.body }));
    return { items, next: items.at(-1)?.seq ?? after, more: rows.length > n };
  }

  async delivered(recipient: string, ids: readonly string[]): Promise<number> {
    this.#open();
    checkIds(ids);
    if (ids.length === 0) return 0;
    const unique = [...new Set(ids)];
    return this.#writer.run(async (tx) => {
      await flushBatch(tx);
      return (await tx.query<{ n: number }>(SQL.delivered, [recipient, unique]))[0]!.n;
    });
  }

  async putAllow(recipient: string, contacts: readonly string[]): Promise<void> {
    this.#open();
    const list = [...allowList(contacts, this.limits.maxContacts)];
    await this.#transaction(async (client) => {
      // Two replacements of one list take turns (a DELETE does not wait for rows another one inserts).
      await client.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [ALLOW_LOCK_CLASS, recipient]);
      await client.query('DELETE FROM ohan_allow WHERE recipient = $1', [recipient]);
      if (list.length > 0) {
        await client.query(
          `INSERT INTO ohan_allow (recipient, contact, position)
           SELECT $1, c, o FROM unnest($2::text[]) WITH ORDINALITY AS u(c, o)`,
          [recipient, list],
        );
      }
    });
  }

  async getAllow(recipient: string): Promise<string[]> {
    this.#open();
    return (await this.#read<{ contact: string }>(SQL.allow, [recipient])).map((r) => r.contact);
  }

  async putCard(card: OhanCard, now: number): Promise<CardResult> {
    this.#open();
    const ts = cardTime(card);
    const json = JSON.stringify(card);
    const expiresAt = now + this.limits.cardTtlSeconds * 1000;
    return this.#transaction(async (client): Promise<CardResult> => {
      // Every card write holds the card count first: the cap is exact and two writers cannot deadlock.
      const { rows: totals } = await client.query<{ count: number }>(
        'SELECT count::float8 AS count FROM ohan_card_totals WHERE id = 1 FOR UPDATE',
      );
      const { rows } = await client.query<{ ts: number }>('SELECT ts::float8 AS ts FROM ohan_cards WHERE key = $1', [
        card.key,
      ]);
      const current = rows[0]?.ts;
      if (current !== undefined && current >= ts) {
        if (current === ts) {
          await client.query('UPDATE ohan_cards SET expires_at = greatest(expires_at, $2::bigint) WHERE key = $1', [
            card.key,
            expiresAt,
          ]);
        }
        return 'stale';
      }
      if (current === undefined) {
        if (totals[0]!.count >= this.limits.maxCards) return 'full';
        await client.query('UPDATE ohan_card_totals SET count = count + 1 WHERE id = 1');
      }
      await client.query(
        `INSERT INTO ohan_cards (key, ts, body, expires_at) VALUES ($1, $2::bigint, $3, $4::bigint)
         ON CONFLICT (key) DO UPDATE SET ts = excluded.ts, body = excluded.body, expires_at = excluded.expires_at`,
        [card.key, ts, json, expiresAt],
      );
      return current === undefined ? 'stored' : 'replaced';
    });
  }

  async getCard(key: string, now: number): Promise<OhanCard | undefined> {
    this.#open();
    const [row] = await this.#read<{ body: string }>(SQL.card, [key, now]);
    return row === undefined ? undefined : (JSON.parse(row.body) as OhanCard);
  }

  async knows(key: string, now: number): Promise<boolean> {
    this.#open();
    return (await this.#read<{ known: boolean }>(SQL.knows, [key, now]))[0]!.known;
  }

  async sweepExpiredCards(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#transaction(async (client) => {
      await client.query('SELECT 1 FROM ohan_card_totals WHERE id = 1 FOR UPDATE');
      const { rows } = await client.query<{ n: number }>(
        `WITH gone AS (
           DELETE FROM ohan_cards WHERE key IN
             (SELECT key FROM ohan_cards WHERE expires_at <= $1::bigint ORDER BY expires_at LIMIT $2::int)
           RETURNING 1
         ),
         u AS (UPDATE ohan_card_totals SET count = count - (SELECT count(*) FROM gone)
               WHERE id = 1 AND EXISTS (SELECT 1 FROM gone))
         SELECT count(*)::int AS n FROM gone`,
        [now, n],
      );
      return rows[0]!.n;
    });
  }

  async cardCount(): Promise<number> {
    this.#open();
    return (await this.#read<{ count: number }>(SQL.cardCount, []))[0]!.count;
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#writer.run(async (tx) => {
      await flushBatch(tx);
      return (await tx.query<{ n: number }>(SQL.expired, [now, n]))[0]!.n;
    });
  }

  async recipientStats(recipient: string): Promise<Totals> {
    this.#open();
    return (await this.#read<Totals>(SQL.recipient, [recipient]))[0] ?? EMPTY_TOTALS;
  }

  async senderStats(sender: string): Promise<Totals> {
    this.#open();
    return (await this.#read<Totals>(SQL.sender, [sender]))[0] ?? EMPTY_TOTALS;
  }

  async totals(): Promise<Totals> {
    this.#open();
    return (await this.#read<Totals>(SQL.box, []))[0]!;
  }

  /** Refuses new calls and waits for the writes already queued; the pool stays open (it is the caller's). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#writer.close();
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  async #read<R>(query: BoxStatement, values: readonly unknown[]): Promise<R[]> {
    const result = await this.#pool.query({ name: query.name, text: query.text, values: values as unknown[] });
    return result.rows as R[];
  }

  /** A transaction of its own on a pooled connection (allow lists, cards): rolled back if `fn` throws. */
  async #transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw new StoreWriteError(error);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const value = await fn(client);
      const commit = await client.query('COMMIT');
      if (commit.command !== 'COMMIT') throw new Error(`COMMIT answered ${commit.command}`);
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch((e: Error) => {
        broken = e;
      });
      throw error instanceof StoreWriteError ? error : new StoreWriteError(error);
    } finally {
      client.release(broken);
    }
  }
}
