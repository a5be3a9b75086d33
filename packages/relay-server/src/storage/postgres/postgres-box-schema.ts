import type { Pool } from 'pg';

/**
 * The OHAN box's PostgreSQL tables (docs/ohan-profile.md; docs/architecture.md, "Storage"), one
 * migration of the relay's schema: events until delivered or expired, running totals (box, per
 * recipient with its next seq, per sender, per pair), allow lists and directory cards. Tables are
 * `ohan_*` only, so they sit beside the WMP tables of the same database. Times are ms since the
 * epoch (bigint). Key columns are `COLLATE "C"`: "ties: lowest key" is then byte order, what the
 * memory and SQLite boxes compare, whatever the database's locale.
 *
 * `ohan_box_totals` is a single row that every write of events locks first (`FOR UPDATE`), then
 * the recipient, sender and pair rows it changes: box-wide writes take turns on it, which is what
 * keeps the box cap exact across nodes, and since no box writer takes any other row first, they
 * cannot deadlock. Recipient rows stay after their queue empties (`next_seq` is what keeps a seq
 * from being reused); sender and pair rows go when their count reaches 0.
 *
 * Append new versions as new constants; never edit a released one.
 */
export const OHAN_BOX_SCHEMA_V1 = `
CREATE TABLE ohan_box_totals (
  id smallint PRIMARY KEY CHECK (id = 1),
  count bigint NOT NULL,
  bytes bigint NOT NULL
);
INSERT INTO ohan_box_totals (id, count, bytes) VALUES (1, 0, 0);

CREATE TABLE ohan_recipients (
  recipient text COLLATE "C" PRIMARY KEY,
  next_seq bigint NOT NULL,
  count bigint NOT NULL,
  bytes bigint NOT NULL
) WITH (fillfactor = 70);

CREATE TABLE ohan_senders (
  sender text COLLATE "C" PRIMARY KEY,
  count bigint NOT NULL,
  bytes bigint NOT NULL
);
-- Box full: the sender holding the most bytes.
CREATE INDEX ohan_senders_bytes ON ohan_senders (bytes DESC, sender);

CREATE TABLE ohan_pairs (
  recipient text COLLATE "C" NOT NULL,
  sender text COLLATE "C" NOT NULL,
  count bigint NOT NULL,
  bytes bigint NOT NULL,
  PRIMARY KEY (recipient, sender)
);
-- Recipient full, contact event: the other sender holding the most bytes for that recipient.
CREATE INDEX ohan_pairs_bytes ON ohan_pairs (recipient, bytes DESC, sender);

-- pos is arrival order (assigned under the box totals lock, so it is also commit order): what
-- "oldest" means in the eviction rules; it has no index of its own (six indexes are enough work
-- per insert), every search that orders by it has it last in its index. lane: 0 contact, 1 stranger.
CREATE TABLE ohan_events (
  id text COLLATE "C" PRIMARY KEY,
  pos bigint GENERATED ALWAYS AS IDENTITY,
  recipient text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  sender text COLLATE "C" NOT NULL,
  lane smallint NOT NULL CHECK (lane IN (0, 1)),
  strength smallint NOT NULL,
  expires_at bigint NOT NULL,
  size integer NOT NULL,
  body text NOT NULL,
  UNIQUE (recipient, seq)
);
CREATE INDEX ohan_events_expiry ON ohan_events (expires_at, pos);
CREATE INDEX ohan_events_strangers ON ohan_events (recipient, strength, pos) WHERE lane = 1;
CREATE INDEX ohan_events_pair ON ohan_events (recipient, sender, pos);
CREATE INDEX ohan_events_sender ON ohan_events (sender, pos);

CREATE TABLE ohan_allow (
  recipient text COLLATE "C" NOT NULL,
  contact text COLLATE "C" NOT NULL,
  position integer NOT NULL,
  PRIMARY KEY (recipient, contact)
);

CREATE TABLE ohan_cards (
  key text COLLATE "C" PRIMARY KEY,
  ts bigint NOT NULL,
  body text NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX ohan_cards_expiry ON ohan_cards (expires_at);

-- Cards in the directory (the maxCards cap): locked first by every card write.
CREATE TABLE ohan_card_totals (
  id smallint PRIMARY KEY CHECK (id = 1),
  count bigint NOT NULL
);
INSERT INTO ohan_card_totals (id, count) VALUES (1, 0);
`;

/**
 * Version 2: when each event arrived (what `wmp-relay admin queues` shows as a box's oldest age),
 * by the database's clock at insert; events of version 1 read 0 (unknown).
 */
export const OHAN_BOX_SCHEMA_V2 = `
ALTER TABLE ohan_events ADD COLUMN stored_at bigint NOT NULL DEFAULT 0;
ALTER TABLE ohan_events ALTER COLUMN stored_at SET DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
`;

/** The box's migrations, in order: what the relay's migration list takes as its box versions. */
export const OHAN_BOX_MIGRATIONS: readonly { readonly name: string; readonly sql: string }[] = Object.freeze([
  { name: 'ohan box', sql: OHAN_BOX_SCHEMA_V1 },
  { name: 'ohan box arrival times', sql: OHAN_BOX_SCHEMA_V2 },
]);

/** Advisory lock class of the box (the two-key form, apart from every single-key lock). */
export const OHAN_LOCK_CLASS = 0x4f48414e; // "OHAN"
/** Lock ids within `OHAN_LOCK_CLASS`; allow lists lock `hashtext(recipient)` in a class of their own. */
const MIGRATE_LOCK_ID = 1;

/**
 * Creates the box's tables when the database (the `search_path` schema) has none yet, in one
 * transaction under an advisory lock, so N nodes starting at once create them once: for a box used
 * on its own or in tests. A relay whose migration runner applies `OHAN_BOX_MIGRATIONS` need not
 * call it (it then finds the tables and does nothing).
 */
export async function migrateBoxSchema(pool: Pool): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [OHAN_LOCK_CLASS, MIGRATE_LOCK_ID]);
    const { rows } = await client.query<{ missing: boolean }>(
      "SELECT to_regclass('ohan_box_totals') IS NULL AS missing",
    );
    if (rows[0]!.missing) for (const { sql } of OHAN_BOX_MIGRATIONS) await client.query(sql);
    await client.query('COMMIT');
  } catch (error) {
    broken = error as Error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release(broken);
  }
}
