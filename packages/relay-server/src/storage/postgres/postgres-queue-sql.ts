// The WMP queue's statements on PostgreSQL and the rows they return (set-based: `unnest` arrays).

/** The name of the queue's row in `wmp_totals`. */
export const QUEUE_TOTALS = 'wmp_queue';

export interface MessageRow {
  recipient: string;
  seq: number;
  message_id: string;
  sender: string;
  body: string;
  expires_at: number;
  bytes: number;
  delivered: boolean;
  notify: boolean;
  evidence: boolean;
}

export interface RemovedRow {
  recipient: string;
  seq: number;
  message_id: string;
  sender: string;
  bytes: number;
  delivered: boolean;
  notify: boolean;
  evidence: boolean;
  /** The part of a partitioned queue it was in, or null. */
  part: string | null;
}

const REMOVED = 'recipient, seq, message_id, sender, bytes, delivered, notify, evidence, part';
const MESSAGE = 'recipient, seq, message_id, sender, body, expires_at, bytes, delivered, notify, evidence';

export const QUEUE_SQL = {
  seqOf: 'SELECT seq FROM wmp_messages WHERE recipient = $1 AND message_id = $2',
  page: `SELECT ${MESSAGE} FROM wmp_messages
         WHERE recipient = $1 AND seq > $2 AND expires_at > $3 ORDER BY seq LIMIT $4`,
  stats: 'SELECT count, bytes FROM wmp_queues WHERE recipient = $1',
  totals: `SELECT count, bytes FROM wmp_totals WHERE name = '${QUEUE_TOTALS}'`,
  undelivered: `SELECT count(*) AS n FROM wmp_messages
                WHERE recipient = $1 AND NOT delivered AND expires_at > $2 AND sender <> $3`,
  senders: `SELECT s.recipient, s.sender AS key, s.count, s.bytes FROM wmp_queue_senders AS s
            JOIN unnest($1::text[], $2::text[]) AS u(r, x) ON s.recipient = u.r AND s.sender = u.x`,
  parts: `SELECT p.recipient, p.part AS key, p.count, p.bytes FROM wmp_queue_parts AS p
          JOIN unnest($1::text[], $2::text[]) AS u(r, x) ON p.recipient = u.r AND p.part = u.x`,
  partStats: 'SELECT count, bytes FROM wmp_queue_parts WHERE recipient = $1 AND part = $2',
  existing: `SELECT m.recipient, m.message_id, m.seq FROM wmp_messages AS m
             JOIN unnest($1::text[], $2::text[]) AS u(r, id) ON m.recipient = u.r AND m.message_id = u.id`,
  insert: `INSERT INTO wmp_messages (recipient, seq, message_id, sender, expires_at, bytes, notify, body, part, evidence, due_at)
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
                                $7::boolean[], $8::text[], $9::text[], $10::boolean[], $11::bigint[])`,
  byId: `SELECT ${MESSAGE} FROM wmp_messages WHERE recipient = $1 AND message_id = $2`,
  // Rows another node is claiming (or an ack is deleting) are skipped, never waited for.
  claimDue: `UPDATE wmp_messages AS m SET due_at = $1 FROM
             (SELECT recipient, seq FROM wmp_messages
              WHERE due_at IS NOT NULL AND due_at <= $2 AND expires_at > $2
              ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) AS d
             WHERE m.recipient = d.recipient AND m.seq = d.seq
             RETURNING ${MESSAGE.replace(/(\w+)/g, 'm.$1')}`,
  // A pair named twice is deleted (and returned) once.
  deleteIds: `DELETE FROM wmp_messages AS m USING unnest($1::text[], $2::text[]) AS u(r, id)
              WHERE m.recipient = u.r AND m.message_id = u.id RETURNING ${REMOVED.replace(/(\w+)/g, 'm.$1')}`,
  deleteThrough: `DELETE FROM wmp_messages WHERE recipient = $1 AND seq <= $2 RETURNING ${REMOVED}`,
  // Only rows not marked yet come back: each sender hears `delivered` once, whatever node wrote it.
  // A row another transaction holds (an ack deleting it) is skipped, never waited for: that
  // transaction reports its status.
  markDelivered: `UPDATE wmp_messages AS m SET delivered = true
                  FROM (SELECT x.recipient, x.seq FROM wmp_messages AS x
                        JOIN (SELECT DISTINCT r, s FROM unnest($1::text[], $2::bigint[]) AS u(r, s)) AS u
                          ON x.recipient = u.r AND x.seq = u.s
                        WHERE NOT x.delivered FOR UPDATE OF x SKIP LOCKED) AS u
                  WHERE m.recipient = u.recipient AND m.seq = u.seq
                  RETURNING m.recipient, m.seq, m.message_id, m.sender, m.notify, m.evidence`,
  expiredRecipients: `SELECT DISTINCT recipient FROM
                      (SELECT recipient FROM wmp_messages WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2) AS e`,
  // Rows an ack holds are left to it (the sweep holds queue rows the ack locks at COMMIT).
  deleteExpired: `DELETE FROM wmp_messages AS m USING
                  (SELECT recipient, seq FROM wmp_messages WHERE expires_at <= $1 AND recipient = ANY($2::text[])
                   ORDER BY expires_at, recipient, seq LIMIT $3 FOR UPDATE SKIP LOCKED) AS e
                  WHERE m.recipient = e.recipient AND m.seq = e.seq
                  RETURNING ${REMOVED.replace(/(\w+)/g, 'm.$1')}, m.expires_at`,
  putQueues: `UPDATE wmp_queues AS q SET next_seq = u.n, count = u.c, bytes = u.b
              FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS u(r, n, c, b)
              WHERE q.recipient = u.r`,
  addSenders: `INSERT INTO wmp_queue_senders AS s (recipient, sender, count, bytes)
               SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
               ON CONFLICT (recipient, sender) DO UPDATE SET count = s.count + excluded.count, bytes = s.bytes + excluded.bytes`,
  // Lowered at COMMIT without a lock taken at BEGIN: rows locked in order first, then changed.
  lockReleased: 'SELECT 1 FROM wmp_queues WHERE recipient = ANY($1::text[]) ORDER BY recipient FOR UPDATE',
  release: `UPDATE wmp_queues AS q SET count = q.count - u.c, bytes = q.bytes - u.b
            FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u(r, c, b) WHERE q.recipient = u.r`,
  // A sender with nothing left in a queue has no row: the table stays as small as the queues.
  dropSenders: `DELETE FROM wmp_queue_senders AS s USING unnest($1::text[], $2::text[]) AS u(r, x)
                WHERE s.recipient = u.r AND s.sender = u.x AND s.count <= 0`,
  addParts: `INSERT INTO wmp_queue_parts AS p (recipient, part, count, bytes)
             SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
             ON CONFLICT (recipient, part) DO UPDATE SET count = p.count + excluded.count, bytes = p.bytes + excluded.bytes`,
  dropParts: `DELETE FROM wmp_queue_parts AS p USING unnest($1::text[], $2::text[]) AS u(r, x)
              WHERE p.recipient = u.r AND p.part = u.x AND p.count <= 0`,
} as const;
