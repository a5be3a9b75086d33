// The OHAN box's statements on PostgreSQL (named, prepared once per connection).
import type { Lane } from '../contracts/box-store.js';
import { OHAN_LOCK_CLASS } from './postgres-box-schema.js';
import type { BoxStatement } from './postgres-box-writer.js';

export const LANE_CODE: Record<Lane, number> = { contact: 0, stranger: 1 };
export const NO_EXPIRY_FILTER = Number.MIN_SAFE_INTEGER;
/** Allow lists lock `(ALLOW_LOCK_CLASS, hashtext(recipient))` while they are replaced. */
export const ALLOW_LOCK_CLASS = OHAN_LOCK_CLASS + 1;

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

export const BOX_SQL = {
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
  holdsAny: statement(
    'holds_any',
    `SELECT EXISTS (SELECT 1 FROM ohan_cards WHERE key = $1 AND expires_at > $2::bigint)
         OR EXISTS (SELECT 1 FROM ohan_recipients WHERE recipient = $1 AND count > 0)
         OR EXISTS (SELECT 1 FROM ohan_senders WHERE sender = $1 AND count > 0)
         OR EXISTS (SELECT 1 FROM ohan_allow WHERE recipient = $1) AS held`,
  ),
  allow: statement('allow', 'SELECT contact FROM ohan_allow WHERE recipient = $1 ORDER BY position'),
  card: statement('card', 'SELECT body FROM ohan_cards WHERE key = $1 AND expires_at > $2::bigint'),
  cardCount: statement('card_count', 'SELECT count::float8 AS count FROM ohan_card_totals WHERE id = 1'),
} as const;
