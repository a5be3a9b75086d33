/**
 * Version 1 of the relay's PostgreSQL schema: the WMP queue, sessions, MLS key packages and MLS
 * group state (the OHAN box comes in its own migration). Times are ms since the epoch (bigint);
 * running totals live in rows of `wmp_totals` and change in the same transaction as the rows
 * they count, so every cap check reads one row. Recipient rows of `wmp_queues` are kept after
 * their queue empties: `next_seq` is what keeps a seq from ever being reused, and the row's lock
 * is what orders a recipient's appends (docs/architecture.md, "Storage").
 */
export const V001_INITIAL = `
CREATE TABLE wmp_totals (
  name text PRIMARY KEY,
  count bigint NOT NULL DEFAULT 0,
  bytes bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 50);
INSERT INTO wmp_totals (name) VALUES
  ('wmp_queue'), ('sessions'), ('pending_sessions'), ('mls_key_packages'), ('mls_groups');

-- The writer decides caps on totals read at the start of a transaction and checks, after
-- updating them at its end, that every decision still holds: this fails the transaction if not.
CREATE FUNCTION wmp_check_totals(ok boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ok THEN
    RAISE EXCEPTION 'a total changed under a cap decision' USING ERRCODE = 'WMP01';
  END IF;
END
$$;

-- One row per recipient ever queued for; locked (FOR UPDATE, in recipient order) by every write
-- of that recipient's queue, so seq order is commit order.
CREATE TABLE wmp_queues (
  recipient text PRIMARY KEY,
  next_seq bigint NOT NULL DEFAULT 1,
  count bigint NOT NULL DEFAULT 0,
  bytes bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 70);

-- Each sender's part of each recipient's queue (a sender holds at most a share of it); a row
-- goes when its count reaches 0.
CREATE TABLE wmp_queue_senders (
  recipient text NOT NULL,
  sender text NOT NULL,
  count bigint NOT NULL,
  bytes bigint NOT NULL,
  PRIMARY KEY (recipient, sender)
) WITH (fillfactor = 70);

CREATE TABLE wmp_messages (
  recipient text NOT NULL,
  seq bigint NOT NULL,
  message_id text NOT NULL,
  sender text NOT NULL,
  expires_at bigint NOT NULL,
  bytes bigint NOT NULL,
  -- Written to a live connection at least once: its sender was told \`delivered\`.
  delivered boolean NOT NULL DEFAULT false,
  -- Its sender asked for statuses: a terminal one it cannot take live is kept for it.
  notify boolean NOT NULL DEFAULT false,
  body text NOT NULL,
  PRIMARY KEY (recipient, seq),
  UNIQUE (recipient, message_id)
);
CREATE INDEX wmp_messages_expiry ON wmp_messages (expires_at);

-- A session record as JSON text (only hashes of resumption tokens, never a token).
CREATE TABLE wmp_sessions (
  id text PRIMARY KEY,
  expires_at bigint NOT NULL,
  pending boolean NOT NULL,
  record text NOT NULL
);
CREATE INDEX wmp_sessions_expiry ON wmp_sessions (expires_at);

-- id is publish order: the oldest key package of an identity is handed out first.
CREATE TABLE mls_key_packages (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  ref text NOT NULL UNIQUE,
  identity text NOT NULL,
  cipher_suite integer NOT NULL,
  expires_at bigint NOT NULL,
  size integer NOT NULL,
  body text NOT NULL
);
CREATE INDEX mls_key_packages_identity ON mls_key_packages (identity, id);
CREATE INDEX mls_key_packages_expiry ON mls_key_packages (expires_at);

-- One per identity, never taken (RFC 9420 last-resort KeyPackage); counted in mls_key_packages.
CREATE TABLE mls_last_resort_key_packages (
  identity text PRIMARY KEY,
  ref text NOT NULL,
  cipher_suite integer NOT NULL,
  expires_at bigint NOT NULL,
  size integer NOT NULL,
  body text NOT NULL
);
CREATE INDEX mls_last_resort_expiry ON mls_last_resort_key_packages (expires_at);

CREATE TABLE mls_groups (
  session_id text PRIMARY KEY,
  group_id text NOT NULL,
  cipher_suite integer NOT NULL,
  epoch bigint NOT NULL,
  last_commit text,
  expires_at bigint NOT NULL
);
CREATE INDEX mls_groups_expiry ON mls_groups (expires_at);
`;
