import type { BoxEventRecord } from '../contracts/box-input.js';
import { type BoxTotalsView, laneWithoutEviction } from '../contracts/box-rules.js';
import type { BoxLimits, Lane, PublishResult } from '../contracts/box-store.js';
import type { Totals } from '../contracts/totals.js';
import { BoxFastPathError, type BoxStatement, type BoxTx } from './postgres-box-writer.js';

interface Counter {
  count: number;
  bytes: number;
}

interface RecipientCounter extends Counter {
  nextSeq: number;
}

const LANE_CODE: Record<Lane, number> = { contact: 0, stranger: 1 };
/** Most publishes whose facts one load reads (a batch has at most 100). */
const MAX_LOAD = 100;

/** What the rules read about one publish: its own recipient, sender and pair, and the box. */
export interface PublishFacts {
  readonly known: boolean;
  readonly recipientCard: boolean;
  readonly senderCard: boolean;
  readonly contact: boolean;
  readonly box: Totals;
  readonly recipient: Totals;
  readonly sender: Totals;
  readonly pair: Totals;
}
const pairKey = (recipient: string, sender: string) => `${recipient}\n${sender}`;

/**
 * The facts of every publish of a batch, in one round trip: which ids are stored, which keys have
 * cards, which pairs are contacts, and the totals rows of the recipients, senders and pairs
 * (locked, in key order; the box totals row is locked already). Numbers come through JSON, so
 * bigints arrive as numbers whatever the pool's type parsers.
 */
const LOAD: BoxStatement = {
  name: 'ohan_box_batch_load',
  text: `WITH
      r AS (SELECT recipient, next_seq, count, bytes FROM ohan_recipients
            WHERE recipient = ANY($2::text[]) ORDER BY recipient FOR UPDATE),
      s AS (SELECT sender, count, bytes FROM ohan_senders WHERE sender = ANY($3::text[]) ORDER BY sender FOR UPDATE),
      p AS (SELECT t.recipient, t.sender, t.count, t.bytes FROM ohan_pairs t
            JOIN unnest($4::text[], $5::text[]) AS u(r, s) ON t.recipient = u.r AND t.sender = u.s
            ORDER BY t.recipient, t.sender FOR UPDATE OF t)
    SELECT
      (SELECT coalesce(array_agg(id), '{}') FROM ohan_events WHERE id = ANY($1::text[])) AS known,
      (SELECT coalesce(array_agg(key), '{}') FROM ohan_cards WHERE key = ANY($6::text[])) AS cards,
      (SELECT coalesce(json_agg(json_build_array(a.recipient, a.contact)), '[]') FROM ohan_allow a
         JOIN unnest($4::text[], $5::text[]) AS u(r, s) ON a.recipient = u.r AND a.contact = u.s) AS contacts,
      (SELECT coalesce(json_agg(json_build_array(recipient, next_seq, count, bytes)), '[]') FROM r) AS recipients,
      (SELECT coalesce(json_agg(json_build_array(sender, count, bytes)), '[]') FROM s) AS senders,
      (SELECT coalesce(json_agg(json_build_array(recipient, sender, count, bytes)), '[]') FROM p) AS pairs,
      (SELECT json_build_array(count, bytes) FROM ohan_box_totals WHERE id = 1) AS box`,
};

interface LoadRow {
  known: string[];
  cards: string[];
  contacts: [string, string][];
  recipients: [string, number, number, number][];
  senders: [string, number, number][];
  pairs: [string, string, number, number][];
  box: [number, number];
}

/**
 * The events stored by the batch and the totals rows they changed, in one statement: events in
 * arrival order (`pos` follows the arrays), totals as absolute values (exact: the rows are
 * locked and this transaction is their only writer).
 */
const FLUSH: BoxStatement = {
  name: 'ohan_box_batch_flush',
  text: `WITH
      e AS (INSERT INTO ohan_events (recipient, seq, id, sender, lane, strength, expires_at, size, body)
            SELECT recipient, seq, id, sender, lane, strength, expires_at, size, body
            FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::smallint[], $6::smallint[],
                        $7::bigint[], $8::int[], $9::text[])
                 WITH ORDINALITY AS u(recipient, seq, id, sender, lane, strength, expires_at, size, body, ord)
            ORDER BY ord),
      r AS (INSERT INTO ohan_recipients (recipient, next_seq, count, bytes)
            SELECT * FROM unnest($10::text[], $11::bigint[], $12::bigint[], $13::bigint[])
            ON CONFLICT (recipient) DO UPDATE
              SET next_seq = excluded.next_seq, count = excluded.count, bytes = excluded.bytes),
      s AS (INSERT INTO ohan_senders (sender, count, bytes)
            SELECT * FROM unnest($14::text[], $15::bigint[], $16::bigint[])
            ON CONFLICT (sender) DO UPDATE SET count = excluded.count, bytes = excluded.bytes),
      p AS (INSERT INTO ohan_pairs (recipient, sender, count, bytes)
            SELECT * FROM unnest($17::text[], $18::text[], $19::bigint[], $20::bigint[])
            ON CONFLICT (recipient, sender) DO UPDATE SET count = excluded.count, bytes = excluded.bytes)
    UPDATE ohan_box_totals SET count = $21::bigint, bytes = $22::bigint WHERE id = 1`,
};

/**
 * The PostgreSQL box's fast path, for one transaction (the PostgreSQL twin of the SQLite box's
 * `BoxTotalsCache`): the facts of the batch's publishes are loaded at once, each publish that
 * needs no eviction is decided by `laneWithoutEviction` (`admitEvent` itself over these totals)
 * and counted here, and all of them are written by one statement before the next statement that
 * reads the tables (`flush`: before COMMIT, before a delivery or sweep, before a publish that
 * takes the rules' slow path). Exact because the rows it counts are locked by this transaction,
 * which every box writer of every node must wait for (the box totals row).
 */
export class BoxBatch {
  readonly #tx: BoxTx;
  readonly #limits: BoxLimits;
  /** Ids loaded (so `#known` answers for them). */
  readonly #ids = new Set<string>();
  /** Stored ids among those loaded, and every id this batch stored. */
  readonly #known = new Set<string>();
  /** Keys whose card presence was loaded, and those of them that have one. */
  readonly #cardKeys = new Set<string>();
  readonly #cards = new Set<string>();
  readonly #contactPairs = new Set<string>();
  readonly #contacts = new Set<string>();
  readonly #recipients = new Map<string, RecipientCounter>();
  readonly #senders = new Map<string, Counter>();
  readonly #pairs = new Map<string, Counter & { readonly recipient: string; readonly sender: string }>();
  #box: Counter | undefined;
  readonly #stored: { readonly record: BoxEventRecord; readonly lane: Lane; readonly seq: number }[] = [];
  readonly #dirtyRecipients = new Set<string>();
  readonly #dirtySenders = new Set<string>();
  readonly #dirtyPairs = new Set<string>();
  readonly #view: BoxTotalsView;
  /** Publishes whose facts the next load reads: all of the batch, fewer after a slow one. */
  #window = MAX_LOAD;

  constructor(tx: BoxTx, limits: BoxLimits) {
    this.#tx = tx;
    this.#limits = limits;
    const loaded = <T>(value: T | undefined, what: string): T => {
      if (value === undefined) throw new Error(`box batch: ${what} not loaded`);
      return value;
    };
    this.#view = {
      hasCard: (key) => loaded(this.#cardKeys.has(key) ? this.#cards.has(key) : undefined, 'card'),
      isContact: (recipient, sender) => {
        const key = pairKey(recipient, sender);
        return loaded(this.#contactPairs.has(key) ? this.#contacts.has(key) : undefined, 'contact');
      },
      pair: (recipient, sender) => loaded<Totals>(this.#pairs.get(pairKey(recipient, sender)), 'pair'),
      sender: (sender) => loaded<Totals>(this.#senders.get(sender), 'sender'),
      recipient: (recipient) => loaded<Totals>(this.#recipients.get(recipient), 'recipient'),
      box: () => loaded<Totals>(this.#box, 'box'),
    };
  }

  /**
   * Decides `record` from the batch's totals (loading those of the next publishes of the batch,
   * `upcoming`, when this one's are not loaded yet): `exists`, or `stored` with no eviction
   * (counted here, written by `flush`), or, when the rules must run over the tables (an eviction
   * or a refusal), this publish's facts as they will be once the batch is flushed.
   */
  async decide(
    record: BoxEventRecord,
    upcoming: readonly BoxEventRecord[],
  ): Promise<{ readonly result: PublishResult } | { readonly facts: PublishFacts }> {
    if (!this.#ids.has(record.id)) {
      const next = upcoming.slice(0, this.#window);
      await this.#load(next.includes(record) ? next : [record, ...next]);
    }
    if (this.#known.has(record.id)) return { result: { status: 'exists', id: record.id } };
    const key = pairKey(record.recipient, record.sender);
    const recipient = this.#recipients.get(record.recipient)!;
    const sender = this.#senders.get(record.sender)!;
    const pair = this.#pairs.get(key)!;
    const box = this.#box!;
    const lane = laneWithoutEviction(this.#view, record, this.#limits);
    if (lane === undefined) {
      // The slow path flushes and forgets: load little next time, until publishes are fast again.
      this.#window = 1;
      return {
        facts: {
          known: false,
          recipientCard: this.#cards.has(record.recipient),
          senderCard: this.#cards.has(record.sender),
          contact: this.#contacts.has(key),
          box: { count: box.count, bytes: box.bytes },
          recipient: { count: recipient.count, bytes: recipient.bytes },
          sender: { count: sender.count, bytes: sender.bytes },
          pair: { count: pair.count, bytes: pair.bytes },
        },
      };
    }
    this.#window = Math.min(this.#window * 2, MAX_LOAD);
    const seq = recipient.nextSeq++;
    for (const counter of [recipient, sender, pair, box]) {
      counter.count++;
      counter.bytes += record.size;
    }
    this.#dirtyRecipients.add(record.recipient);
    this.#dirtySenders.add(record.sender);
    this.#dirtyPairs.add(key);
    this.#known.add(record.id);
    this.#stored.push({ record, lane, seq });
    return { result: { status: 'stored', id: record.id, seq, evicted: 0 } };
  }

  /** Writes what the batch stored, and forgets every fact: statements are about to change the rows. */
  async flush(): Promise<void> {
    if (this.#stored.length > 0) {
      const events = this.#stored.splice(0);
      const recipients = [...this.#dirtyRecipients].map((key) => [key, this.#recipients.get(key)!] as const);
      const senders = [...this.#dirtySenders].map((key) => [key, this.#senders.get(key)!] as const);
      const pairs = [...this.#dirtyPairs].map((key) => this.#pairs.get(key)!);
      try {
        await this.#tx.query(FLUSH, [
          events.map((e) => e.record.recipient),
          events.map((e) => e.seq),
          events.map((e) => e.record.id),
          events.map((e) => e.record.sender),
          events.map((e) => LANE_CODE[e.lane]),
          events.map((e) => e.record.strength),
          events.map((e) => e.record.expiresAt),
          events.map((e) => e.record.size),
          events.map((e) => e.record.json),
          recipients.map(([key]) => key),
          recipients.map(([, r]) => r.nextSeq),
          recipients.map(([, r]) => r.count),
          recipients.map(([, r]) => r.bytes),
          senders.map(([key]) => key),
          senders.map(([, s]) => s.count),
          senders.map(([, s]) => s.bytes),
          pairs.map((p) => p.recipient),
          pairs.map((p) => p.sender),
          pairs.map((p) => p.count),
          pairs.map((p) => p.bytes),
          this.#box!.count,
          this.#box!.bytes,
        ]);
      } catch (error) {
        throw new BoxFastPathError(error);
      }
    }
    this.#forget();
  }

  #forget(): void {
    for (const set of [this.#ids, this.#known, this.#cardKeys, this.#cards, this.#contactPairs, this.#contacts]) {
      set.clear();
    }
    this.#recipients.clear();
    this.#senders.clear();
    this.#pairs.clear();
    this.#box = undefined;
    this.#dirtyRecipients.clear();
    this.#dirtySenders.clear();
    this.#dirtyPairs.clear();
  }

  /** Loads the facts of `records` that are not loaded yet (the first is always new). */
  async #load(records: readonly BoxEventRecord[]): Promise<void> {
    const ids = new Set<string>();
    const recipients = new Set<string>();
    const senders = new Set<string>();
    const pairs = new Map<string, readonly [string, string]>();
    const cardKeys = new Set<string>();
    for (const r of records) {
      if (!this.#ids.has(r.id)) ids.add(r.id);
      if (!this.#recipients.has(r.recipient)) recipients.add(r.recipient);
      if (!this.#senders.has(r.sender)) senders.add(r.sender);
      const key = pairKey(r.recipient, r.sender);
      if (!this.#pairs.has(key)) pairs.set(key, [r.recipient, r.sender]);
      for (const k of [r.recipient, r.sender]) if (!this.#cardKeys.has(k)) cardKeys.add(k);
    }
    const pairList = [...pairs.values()];
    let row: LoadRow;
    try {
      [row] = (await this.#tx.query<LoadRow>(LOAD, [
        [...ids],
        [...recipients],
        [...senders],
        pairList.map(([r]) => r),
        pairList.map(([, s]) => s),
        [...cardKeys],
      ])) as [LoadRow];
    } catch (error) {
      throw new BoxFastPathError(error);
    }
    for (const id of ids) this.#ids.add(id);
    for (const id of row.known) this.#known.add(id);
    for (const k of cardKeys) this.#cardKeys.add(k);
    for (const k of row.cards) this.#cards.add(k);
    for (const key of pairs.keys()) this.#contactPairs.add(key);
    for (const [r, s] of row.contacts) this.#contacts.add(pairKey(r, s));
    for (const r of recipients) this.#recipients.set(r, { nextSeq: 1, count: 0, bytes: 0 });
    for (const [r, nextSeq, count, bytes] of row.recipients) this.#recipients.set(r, { nextSeq, count, bytes });
    for (const s of senders) this.#senders.set(s, { count: 0, bytes: 0 });
    for (const [s, count, bytes] of row.senders) this.#senders.set(s, { count, bytes });
    for (const [key, [recipient, sender]] of pairs) this.#pairs.set(key, { recipient, sender, count: 0, bytes: 0 });
    for (const [recipient, sender, count, bytes] of row.pairs) {
      this.#pairs.set(pairKey(recipient, sender), { recipient, sender, count, bytes });
    }
    this.#box ??= { count: row.box[0], bytes: row.box[1] };
  }
}
