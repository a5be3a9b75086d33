/**
 * The evidence repository (wmp-tables §9): signed records in the order stored (`seq`), the
 * identities that may read each (`parties`), the open cases later records are made from, and the
 * mark of a queued message under evidence (its delivery gives rise to records). The record count
 * and bytes are a totals row, checked in the transaction of each insert (the cap).
 */
export const V005_EVIDENCE = `
INSERT INTO wmp_totals (name) VALUES ('evidence');

CREATE TABLE evidence_records (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  message_id text NOT NULL,
  sender text NOT NULL,
  session_id text,
  event_type text NOT NULL,
  event_time bigint NOT NULL,
  issuer text NOT NULL,
  parties text[] NOT NULL,
  expires_at bigint NOT NULL,
  bytes bigint NOT NULL,
  body text NOT NULL
);
CREATE INDEX evidence_records_message ON evidence_records (message_id);
CREATE INDEX evidence_records_session ON evidence_records (session_id, event_time);
CREATE INDEX evidence_records_expiry ON evidence_records (expires_at);

CREATE TABLE evidence_cases (
  message_id text NOT NULL,
  sender text NOT NULL,
  expires_at bigint NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (message_id, sender)
);
CREATE INDEX evidence_cases_expiry ON evidence_cases (expires_at);

ALTER TABLE wmp_messages ADD COLUMN evidence boolean NOT NULL DEFAULT false;
`;
