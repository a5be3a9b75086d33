import type BetterSqlite3 from 'better-sqlite3';

interface Counter {
  count: number;
  bytes: number;
}

interface RecipientCounter extends Counter {
  nextSeq: number;
}

interface PairCounter extends Counter {
  readonly recipient: string;
  readonly sender: string;
}

/** A stored event as the totals see it. */
export interface CountedEvent {
  readonly recipient: string;
  readonly sender: string;
  readonly size: number;
}

/** Rows of each kind kept between transactions; past it the earliest loaded go (dirty rows always stay). */
const MAX_CACHED = 65_536;

function statements(db: BetterSqlite3.Database) {
  return {
    recipient: db.prepare<[string], RecipientCounter>(
      'SELECT next_seq AS nextSeq, count, bytes FROM ohan_recipients WHERE recipient = ?',
    ),
    sender: db.prepare<[string], Counter>('SELECT count, bytes FROM ohan_senders WHERE sender = ?'),
    pair: db.prepare<[string, string], Counter>(
      'SELECT count, bytes FROM ohan_pairs WHERE recipient = ? AND sender = ?',
    ),
    box: db.prepare<[], Counter>("SELECT count, bytes FROM totals WHERE name = 'ohan_box'"),
    putRecipient: db.prepare(
      `INSERT INTO ohan_recipients (recipient, next_seq, count, bytes) VALUES (?, ?, ?, ?)
       ON CONFLICT (recipient) DO UPDATE SET next_seq = excluded.next_seq, count = excluded.count, bytes = excluded.bytes`,
    ),
    putSender: db.prepare(
      `INSERT INTO ohan_senders (sender, count, bytes) VALUES (?, ?, ?)
       ON CONFLICT (sender) DO UPDATE SET count = excluded.count, bytes = excluded.bytes`,
    ),
    dropSender: db.prepare('DELETE FROM ohan_senders WHERE sender = ?'),
    putPair: db.prepare(
      `INSERT INTO ohan_pairs (recipient, sender, count, bytes) VALUES (?, ?, ?, ?)
       ON CONFLICT (recipient, sender) DO UPDATE SET count = excluded.count, bytes = excluded.bytes`,
    ),
    dropPair: db.prepare('DELETE FROM ohan_pairs WHERE recipient = ? AND sender = ?'),
    putBox: db.prepare("UPDATE totals SET count = ?, bytes = ? WHERE name = 'ohan_box'"),
  };
}

const pairKey = (recipient: string, sender: string) => `${recipient}\n${sender}`;

/**
 * A write-back cache of the box's running-total rows (per recipient with its next seq, per sender,
 * per pair, whole box), for the single writer of the file. Rows are read from the database the
 * first time they are needed; changes are made here and written as absolute values once per
 * transaction (`write`, before COMMIT), so a batch of 100 publishes from 16 senders writes 34 rows
 * instead of 400. Exact because nothing else writes these rows between `write` and COMMIT, and
 * because a transaction that rolls back drops everything cached (`clear`): what is left to read is
 * what committed. Sender and pair rows go when they reach zero, recipient rows stay (next seq).
 */
export class BoxTotalsCache {
  readonly #s: ReturnType<typeof statements>;
  readonly #recipients = new Map<string, RecipientCounter>();
  readonly #senders = new Map<string, Counter>();
  readonly #pairs = new Map<string, PairCounter>();
  #box: Counter | undefined;
  readonly #dirtyRecipients = new Set<string>();
  readonly #dirtySenders = new Set<string>();
  readonly #dirtyPairs = new Set<string>();
  #dirtyBox = false;

  constructor(db: BetterSqlite3.Database) {
    this.#s = statements(db);
  }

  recipient(recipient: string): Readonly<RecipientCounter> {
    return this.#recipient(recipient);
  }

  sender(sender: string): Readonly<Counter> {
    return this.#sender(sender);
  }

  pair(recipient: string, sender: string): Readonly<Counter> {
    return this.#pair(recipient, sender);
  }

  box(): Readonly<Counter> {
    this.#box ??= { ...this.#s.box.get()! };
    return this.#box;
  }

  /** Counts an event just stored at the recipient's next seq, and moves the next seq on. */
  added(event: CountedEvent): void {
    const recipient = this.#recipient(event.recipient);
    const sender = this.#sender(event.sender);
    const pair = this.#pair(event.recipient, event.sender);
    const box = this.box() as Counter;
    recipient.nextSeq++;
    for (const counter of [recipient, sender, pair, box]) {
      counter.count++;
      counter.bytes += event.size;
    }
    this.#dirtyRecipients.add(event.recipient);
    this.#dirtySenders.add(event.sender);
    this.#dirtyPairs.add(pairKey(event.recipient, event.sender));
    this.#dirtyBox = true;
  }

  /**
   * Takes deleted events out of every total. Every row is read first, so a failed read changes
   * nothing; the changes themselves cannot fail.
   */
  removed(events: readonly CountedEvent[]): void {
    if (events.length === 0) return;
    const rows = events.map((e) => ({
      recipient: this.#recipient(e.recipient),
      sender: this.#sender(e.sender),
      pair: this.#pair(e.recipient, e.sender),
      size: e.size,
    }));
    const box = this.box() as Counter;
    for (const [i, row] of rows.entries()) {
      for (const counter of [row.recipient, row.sender, row.pair, box]) {
        counter.count--;
        counter.bytes -= row.size;
      }
      const e = events[i]!;
      this.#dirtyRecipients.add(e.recipient);
      this.#dirtySenders.add(e.sender);
      this.#dirtyPairs.add(pairKey(e.recipient, e.sender));
    }
    this.#dirtyBox = true;
  }

  /** Writes every changed row (absolute values, so writing twice is harmless). */
  write(): void {
    const s = this.#s;
    for (const key of this.#dirtyRecipients) {
      const r = this.#recipients.get(key)!;
      s.putRecipient.run(key, r.nextSeq, r.count, r.bytes);
    }
    for (const key of this.#dirtySenders) {
      const t = this.#senders.get(key)!;
      if (t.count > 0) s.putSender.run(key, t.count, t.bytes);
      else s.dropSender.run(key);
    }
    for (const key of this.#dirtyPairs) {
      const p = this.#pairs.get(key)!;
      if (p.count > 0) s.putPair.run(p.recipient, p.sender, p.count, p.bytes);
      else s.dropPair.run(p.recipient, p.sender);
    }
    if (this.#dirtyBox) s.putBox.run(this.#box!.count, this.#box!.bytes);
    this.#dirtyRecipients.clear();
    this.#dirtySenders.clear();
    this.#dirtyPairs.clear();
    this.#dirtyBox = false;
    for (const map of [this.#recipients, this.#senders, this.#pairs]) trim(map);
  }

  /**
   * Drops the cached rows of these events' recipients, senders and pairs, and the box row: for
   * after `write`, when statements changed those rows directly.
   */
  forget(events: Iterable<{ readonly recipient: string; readonly sender: string }>): void {
    this.#requireClean();
    for (const e of events) {
      this.#recipients.delete(e.recipient);
      this.#senders.delete(e.sender);
      this.#pairs.delete(pairKey(e.recipient, e.sender));
    }
    this.#box = undefined;
  }

  /** Forgets everything, written or not: the transaction rolled back, the database is the truth. */
  clear(): void {
    for (const map of [this.#recipients, this.#senders, this.#pairs]) map.clear();
    this.#box = undefined;
    this.#dirtyRecipients.clear();
    this.#dirtySenders.clear();
    this.#dirtyPairs.clear();
    this.#dirtyBox = false;
  }

  #requireClean(): void {
    if (this.#dirtyRecipients.size + this.#dirtySenders.size + this.#dirtyPairs.size > 0 || this.#dirtyBox) {
      throw new Error('box totals: forget before write');
    }
  }

  #recipient(recipient: string): RecipientCounter {
    let r = this.#recipients.get(recipient);
    if (r === undefined) {
      const row = this.#s.recipient.get(recipient);
      r = row === undefined ? { nextSeq: 1, count: 0, bytes: 0 } : { ...row };
      this.#recipients.set(recipient, r);
    }
    return r;
  }

  #sender(sender: string): Counter {
    let t = this.#senders.get(sender);
    if (t === undefined) {
      t = { count: 0, bytes: 0, ...this.#s.sender.get(sender) };
      this.#senders.set(sender, t);
    }
    return t;
  }

  #pair(recipient: string, sender: string): PairCounter {
    const key = pairKey(recipient, sender);
    let p = this.#pairs.get(key);
    if (p === undefined) {
      p = { recipient, sender, count: 0, bytes: 0, ...this.#s.pair.get(recipient, sender) };
      this.#pairs.set(key, p);
    }
    return p;
  }
}

/** Keeps a map of clean rows bounded: over the cap, the earliest loaded half goes. */
function trim(map: Map<string, unknown>): void {
  if (map.size <= MAX_CACHED) return;
  let excess = map.size - MAX_CACHED / 2;
  for (const key of map.keys()) {
    if (excess-- <= 0) break;
    map.delete(key);
  }
}
