/**
 * The relay's SQLite schema: one file for the WMP queue, the OHAN box and sessions. Rowid tables
 * with UNIQUE(recipient, seq), not WITHOUT ROWID (3.3x larger and 2-4x slower with ~1 KB rows,
 * docs/architecture.md, "Storage"). Running totals live in their own rows and change in the same
 * transaction as the rows they count, so cap checks read one row. Recipient rows are kept after
 * their queue empties: `next_seq` is what keeps a seq from ever being reused.
 */
export const SCHEMA_VERSION = 7;

/**
 * Version 2: MLS key packages (single use, by identity in publish order) and the relay's per-session
 * MLS group state (epoch and the commit that reached it; never a key).
 */
const MLS_SCHEMA = `
INSERT INTO totals (name, count, bytes) VALUES ('mls_key_packages', 0, 0), ('mls_groups', 0, 0);

-- rowid is publish order: the oldest key package of an identity is handed out first.
CREATE TABLE mls_key_packages (
  ref TEXT NOT NULL UNIQUE,
  identity TEXT NOT NULL,
  cipher_suite INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX mls_key_packages_identity ON mls_key_packages (identity);
CREATE INDEX mls_key_packages_expiry ON mls_key_packages (expires_at);

CREATE TABLE mls_groups (
  session_id TEXT PRIMARY KEY,
  group_id TEXT NOT NULL,
  cipher_suite INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  last_commit TEXT,
  expires_at INTEGER NOT NULL
);
CREATE INDEX mls_groups_expiry ON mls_groups (expires_at);
`;

/**
 * Version 3 (hardening and statuses, docs/architecture.md, "Message statuses"): a queued message
 * remembers whether it was written to a live connection (`delivered` is sent once, `expired` only
 * for the others); unauthenticated sessions are counted apart (their own cap);
 * each sender's part of each recipient's queue is counted (a sender holds at most a share of it);
 * directory cards expire when not refreshed and are counted (a cap); one last-resort MLS key
 * package per identity is kept apart (never handed out for good).
 */
const HARDENING_SCHEMA = `
ALTER TABLE wmp_sessions ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
UPDATE wmp_sessions SET pending = 1 WHERE json_extract(record, '$.state') = 'pending';
INSERT INTO totals (name, count, bytes)
  VALUES ('pending_sessions', (SELECT count(*) FROM wmp_sessions WHERE pending = 1), 0);

CREATE TABLE wmp_queue_senders (
  recipient TEXT NOT NULL,
  sender TEXT NOT NULL,
  count INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (recipient, sender)
);
INSERT INTO wmp_queue_senders (recipient, sender, count, bytes)
  SELECT recipient, sender, count(*), sum(bytes) FROM wmp_messages GROUP BY recipient, sender;
-- Written to a live connection at least once: its sender was told \`delivered\`
-- (docs/architecture.md, "Message statuses").
ALTER TABLE wmp_messages ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0;
-- Its sender asked for statuses: a terminal one it cannot take live is kept for it.
ALTER TABLE wmp_messages ADD COLUMN notify INTEGER NOT NULL DEFAULT 0;

ALTER TABLE ohan_cards ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
UPDATE ohan_cards SET expires_at = ts + 7776000000;
CREATE INDEX ohan_cards_expiry ON ohan_cards (expires_at);
INSERT INTO totals (name, count, bytes) VALUES ('ohan_cards', (SELECT count(*) FROM ohan_cards), 0);

-- One per identity, never taken (RFC 9420 last-resort KeyPackage); counted in mls_key_packages.
CREATE TABLE mls_last_resort_key_packages (
  identity TEXT PRIMARY KEY,
  ref TEXT NOT NULL,
  cipher_suite INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX mls_last_resort_expiry ON mls_last_resort_key_packages (expires_at);
`;

/**
 * Version 4 (partitioned queues: a peer relay's outbox, one part per remote recipient,
 * docs/federation-profile.md): a message may belong to a part of its queue, and each part, and
 * each sender's share of it, is counted (`partKeys`: JSON keys, never ambiguous). A part with
 * nothing left has no row.
 */
const PARTS_SCHEMA = `
ALTER TABLE wmp_messages ADD COLUMN part TEXT;
CREATE TABLE wmp_queue_parts (
  recipient TEXT NOT NULL,
  part TEXT NOT NULL,
  count INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (recipient, part)
);
`;

/**
 * Version 5 (what an operator sees, `wmp-relay admin queues`): when each queued message and each
 * box event arrived, so a queue's oldest message has an age. Rows of earlier versions read 0
 * (unknown).
 */
const ARRIVAL_SCHEMA = `
ALTER TABLE wmp_messages ADD COLUMN queued_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ohan_events ADD COLUMN stored_at INTEGER NOT NULL DEFAULT 0;
`;

/**
 * Version 6 (the evidence repository, wmp-tables §9): signed records in the order stored (`seq`
 * never reused: a page cursor never points at a different record), who may read each (the
 * parties, for the party's reads), the open cases later records are made from, and a queued
 * message remembers whether it is under evidence (its delivery gives rise to records).
 */
const EVIDENCE_SCHEMA = `
INSERT INTO totals (name, count, bytes) VALUES ('evidence', 0, 0);
CREATE TABLE evidence_records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  message_id TEXT NOT NULL,
  sender TEXT NOT NULL,
  session_id TEXT,
  event_type TEXT NOT NULL,
  event_time INTEGER NOT NULL,
  issuer TEXT NOT NULL,
  parties TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX evidence_records_message ON evidence_records (message_id);
CREATE INDEX evidence_records_session ON evidence_records (session_id, event_time);
CREATE INDEX evidence_records_expiry ON evidence_records (expires_at);
CREATE TABLE evidence_parties (
  party TEXT NOT NULL,
  record INTEGER NOT NULL,
  PRIMARY KEY (party, record)
) WITHOUT ROWID;
CREATE INDEX evidence_parties_record ON evidence_parties (record);
CREATE TABLE evidence_cases (
  message_id TEXT NOT NULL,
  sender TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (message_id, sender)
);
CREATE INDEX evidence_cases_expiry ON evidence_cases (expires_at);
ALTER TABLE wmp_messages ADD COLUMN evidence INTEGER NOT NULL DEFAULT 0;
`;

/**
 * Version 7 (scheduled delivery, core §3.2 `deliver_after`): a message may be held until it falls
 * due; `claimDue` hands due ones out, earliest first, and moves `due_at` on by a lease while the
 * claimer routes it (a claimer that dies leaves it due again). Only held messages have one.
 */
const DUE_SCHEMA = `
ALTER TABLE wmp_messages ADD COLUMN due_at INTEGER;
CREATE INDEX wmp_messages_due ON wmp_messages (due_at) WHERE due_at IS NOT NULL;
`;

/** What takes a file of version N to N + 1 (applied in order, in the opening transaction). */
export const MIGRATIONS: Readonly<Record<number, string>> = {
  1: MLS_SCHEMA,
  2: HARDENING_SCHEMA,
  3: PARTS_SCHEMA,
  4: ARRIVAL_SCHEMA,
  5: EVIDENCE_SCHEMA,
  6: DUE_SCHEMA,
};

/** What version 1 created (kept so that a migration test can write a version 1 file). */
export const SCHEMA_V1 = `
CREATE TABLE totals (
  name TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
INSERT INTO totals (name, count, bytes) VALUES ('wmp_queue', 0, 0), ('ohan_box', 0, 0), ('sessions', 0, 0);

CREATE TABLE wmp_queues (
  recipient TEXT PRIMARY KEY,
  next_seq INTEGER NOT NULL,
  count INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
CREATE TABLE wmp_messages (
  recipient TEXT NOT NULL,
  seq INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  sender TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (recipient, seq),
  UNIQUE (recipient, message_id)
);
CREATE INDEX wmp_messages_expiry ON wmp_messages (expires_at);

CREATE TABLE ohan_recipients (
  recipient TEXT PRIMARY KEY,
  next_seq INTEGER NOT NULL,
  count INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
CREATE TABLE ohan_senders (
  sender TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
CREATE INDEX ohan_senders_bytes ON ohan_senders (bytes DESC, sender);
CREATE TABLE ohan_pairs (
  recipient TEXT NOT NULL,
  sender TEXT NOT NULL,
  count INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (recipient, sender)
);
CREATE INDEX ohan_pairs_bytes ON ohan_pairs (recipient, bytes DESC, sender);
-- rowid is arrival order among stored events (a new rowid is always above every live one):
-- it is what "oldest" means in the eviction rules.
CREATE TABLE ohan_events (
  recipient TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL UNIQUE,
  sender TEXT NOT NULL,
  lane INTEGER NOT NULL,
  strength INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  size INTEGER NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (recipient, seq)
);
CREATE INDEX ohan_events_expiry ON ohan_events (expires_at);
CREATE INDEX ohan_events_lane ON ohan_events (recipient, lane, strength);
CREATE INDEX ohan_events_pair ON ohan_events (recipient, sender);
CREATE INDEX ohan_events_sender ON ohan_events (sender);
CREATE TABLE ohan_allow (
  recipient TEXT NOT NULL,
  contact TEXT NOT NULL,
  UNIQUE (recipient, contact)
);
CREATE TABLE ohan_cards (
  key TEXT PRIMARY KEY,
  ts INTEGER NOT NULL,
  body TEXT NOT NULL
);

CREATE TABLE wmp_sessions (
  id TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX wmp_sessions_expiry ON wmp_sessions (expires_at);
`;

/** A new file: version 1 and every migration after it, in order (one definition of the schema). */
export const SCHEMA =
  SCHEMA_V1 + MLS_SCHEMA + HARDENING_SCHEMA + PARTS_SCHEMA + ARRIVAL_SCHEMA + EVIDENCE_SCHEMA + DUE_SCHEMA;
