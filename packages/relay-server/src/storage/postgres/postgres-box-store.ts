import type { OhanCard, OhanEvent } from '@wmp/ohan-seal';
import type { Pool, PoolClient } from 'pg';
import { allowList, type BoxEventRecord, boxEventRecord, cardTime } from '../contracts/box-input.js';
import { checkBoxLimits } from '../contracts/box-limits.js';
import { admitEventAsync } from '../contracts/box-rules.js';
import type {
  BoxLimits,
  BoxStore,
  CardResult,
  FetchPage,
  FetchPageText,
  PublishResult,
} from '../contracts/box-store.js';
import { eventPageOf, type StoredEventRow, textPageOf } from '../contracts/fetch-page.js';
import { checkIds, checkSeq, clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { StoreClosedError, StoreWriteError } from '../errors.js';
import { BoxBatch, type PublishFacts } from './postgres-box-batch.js';
import { type FactsRow, factsOf, PublishLedger } from './postgres-box-ledger.js';
import { ALLOW_LOCK_CLASS, NO_EXPIRY_FILTER, BOX_SQL as SQL } from './postgres-box-sql.js';
import {
  type BoxStatement,
  type BoxTx,
  BoxWriter,
  type BoxWriterOptions,
  type BoxWriterStats,
} from './postgres-box-writer.js';
import { unavailable, writeFailure } from './postgres-failures.js';

/** How the box's writer batches and waits (see `BoxWriterOptions`). */
export type PostgresBoxStoreOptions = BoxWriterOptions;

/** Where a transaction keeps its `BoxBatch`. */
const BATCH = {};

/** Writes the transaction's fast-path publishes, if any, before a statement reads or changes the tables. */
async function flushBatch(tx: BoxTx): Promise<void> {
  await tx.peek<BoxBatch>(BATCH)?.flush();
}

/**
 * The OHAN box on PostgreSQL, for a relay on many nodes (docs/ohan-profile.md;
 * docs/architecture.md, "Storage"). It is given a `pg.Pool` on a database that has the box's tables
 * (`OHAN_BOX_MIGRATIONS`, or `migrateBoxSchema`) and runs its own transactions on it; the pool
 * stays the caller's (`close` does not end it).
 *
 * Publishes, deliveries and sweeps go through the box's writer (`BoxWriter`): batches of up to
 * 100 in one transaction, in call order, acknowledged after COMMIT, each transaction holding the
 * box totals row first, so the caps hold exactly across nodes. Most publishes take the fast path
 * (`BoxBatch`): one query reads (and locks) the totals of the batch's publishes, each that needs
 * no eviction is decided by `laneWithoutEviction` from them, and one statement writes them all.
 * The others (a refusal, an eviction) run `admitEventAsync`, the box rules shared with the memory
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
    return eventPageOf(await this.fetchText(recipient, after, limit, now));
  }

  async fetchText(recipient: string, after: number, limit: number, now?: number): Promise<FetchPageText> {
    this.#open();
    checkSeq(after, 'after');
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const rows = await this.#read<StoredEventRow>(SQL.page, [recipient, after, now ?? NO_EXPIRY_FILTER, n + 1]);
    return textPageOf(rows, n, after);
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

  async holdsAny(key: string, now: number): Promise<boolean> {
    this.#open();
    return (await this.#read<{ held: boolean }>(SQL.holdsAny, [key, now]))[0]!.held;
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
    try {
      const result = await this.#pool.query({ name: query.name, text: query.text, values: values as unknown[] });
      return result.rows as R[];
    } catch (error) {
      throw unavailable(error) ?? error;
    }
  }

  /** A transaction of its own on a pooled connection (allow lists, cards): rolled back if `fn` throws. */
  async #transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw writeFailure(error);
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
      throw error instanceof StoreWriteError ? error : writeFailure(error);
    } finally {
      client.release(broken);
    }
  }
}
