import { checkPrefix, clampCount, MAX_RECIPIENTS_PER_CALL } from '../contracts/limits.js';
import type { PostgresDatabase } from './postgres-database.js';

// starts_with, not LIKE (a prefix may hold % or _) and not a range (the column's collation may not
// be byte order). A scan of wmp_queues: called at start and every minute, not per message.
const SQL = 'SELECT recipient FROM wmp_queues WHERE count > 0 AND starts_with(recipient, $1) LIMIT $2';

/** `QueueStore.recipientsWithPrefix` on PostgreSQL: recipients under `prefix` with messages now. */
export async function recipientsWithPrefix(db: PostgresDatabase, prefix: string, limit: number): Promise<string[]> {
  checkPrefix(prefix);
  const n = clampCount(limit, MAX_RECIPIENTS_PER_CALL, 'limit');
  const rows = await db.read<{ recipient: string }>(SQL, [prefix, n], 'wmp_queue_with_prefix');
  return rows.map((r) => r.recipient);
}
