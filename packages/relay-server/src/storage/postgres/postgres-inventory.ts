import type { SessionRecord } from '@wmp/session';
import { decodeSession } from '../contracts/session-json.js';
import {
  type BoxOverview,
  type InventoryPage,
  inventoryArgs,
  inventoryPage,
  type OverviewRow,
  overviewOf,
  type QueueOverview,
  type StoreInventory,
} from '../contracts/store-inventory.js';
import type { PostgresDatabase } from './postgres-database.js';

// Keys compare as bytes (COLLATE "C"), as on SQLite and in memory, whatever the database's locale.
const SQL = {
  queues: `SELECT q.recipient, q.count, q.bytes,
             (SELECT m.queued_at FROM wmp_messages AS m WHERE m.recipient = q.recipient ORDER BY m.seq LIMIT 1) AS oldest
           FROM wmp_queues AS q WHERE q.count > 0 AND q.recipient COLLATE "C" > $1
           ORDER BY q.recipient COLLATE "C" LIMIT $2`,
  boxes: `SELECT r.recipient, r.count, r.bytes,
            (SELECT e.stored_at FROM ohan_events AS e WHERE e.recipient = r.recipient ORDER BY e.seq LIMIT 1) AS oldest
          FROM ohan_recipients AS r WHERE r.count > 0 AND r.recipient > $1 ORDER BY r.recipient LIMIT $2`,
  sessions: `SELECT record FROM wmp_sessions WHERE id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2`,
} as const;

/** The operator's lists on a cluster's database: reads on the pool (committed state), any node. */
export class PostgresInventory implements StoreInventory {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async queues(after: string | undefined, limit: number): Promise<InventoryPage<QueueOverview>> {
    const args = inventoryArgs(after, limit);
    const rows = await this.#db.read<OverviewRow>(SQL.queues, [args.after, args.limit + 1], 'wmp_inventory_queues');
    return inventoryPage(rows.map(overviewOf), args.limit, (r) => r.recipient);
  }

  async boxes(after: string | undefined, limit: number): Promise<InventoryPage<BoxOverview>> {
    const args = inventoryArgs(after, limit);
    const rows = await this.#db.read<OverviewRow>(SQL.boxes, [args.after, args.limit + 1], 'wmp_inventory_boxes');
    return inventoryPage(rows.map(overviewOf), args.limit, (r) => r.recipient);
  }

  async sessions(after: string | undefined, limit: number): Promise<InventoryPage<SessionRecord>> {
    const args = inventoryArgs(after, limit);
    const rows = await this.#db.read<{ record: string }>(
      SQL.sessions,
      [args.after, args.limit + 1],
      'wmp_inventory_sessions',
    );
    return inventoryPage(
      rows.map((r) => decodeSession(r.record)),
      args.limit,
      (r) => r.id,
    );
  }
}
