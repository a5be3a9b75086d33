import type { SessionRecord } from '@wmp/session';
import type BetterSqlite3 from 'better-sqlite3';
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
import { StoreClosedError } from '../errors.js';

function statements(db: BetterSqlite3.Database) {
  return {
    // The running counts are written in the same transaction as the rows (BINARY: byte order).
    queues: db.prepare<[string, number], OverviewRow>(
      `SELECT q.recipient, q.count, q.bytes,
         (SELECT m.queued_at FROM wmp_messages AS m WHERE m.recipient = q.recipient ORDER BY m.seq LIMIT 1) AS oldest
       FROM wmp_queues AS q WHERE q.count > 0 AND q.recipient > ? ORDER BY q.recipient LIMIT ?`,
    ),
    boxes: db.prepare<[string, number], OverviewRow>(
      `SELECT r.recipient, r.count, r.bytes,
         (SELECT e.stored_at FROM ohan_events AS e WHERE e.recipient = r.recipient ORDER BY e.seq LIMIT 1) AS oldest
       FROM ohan_recipients AS r WHERE r.count > 0 AND r.recipient > ? ORDER BY r.recipient LIMIT ?`,
    ),
    sessions: db
      .prepare<[string, number], string>('SELECT record FROM wmp_sessions WHERE id > ? ORDER BY id LIMIT ?')
      .pluck(),
  };
}

/**
 * The operator's lists on the relay's SQLite file: reads on the writer's connection, which only
 * ever sees committed state (see `SqliteQueueStore`).
 */
export class SqliteInventory implements StoreInventory {
  readonly #s: ReturnType<typeof statements>;
  readonly #closed: () => boolean;

  constructor(db: BetterSqlite3.Database, closed: () => boolean) {
    this.#s = statements(db);
    this.#closed = closed;
  }

  async queues(after: string | undefined, limit: number): Promise<InventoryPage<QueueOverview>> {
    const args = this.#args(after, limit);
    return inventoryPage(
      this.#s.queues.all(args.after, args.limit + 1).map(overviewOf),
      args.limit,
      (r) => r.recipient,
    );
  }

  async boxes(after: string | undefined, limit: number): Promise<InventoryPage<BoxOverview>> {
    const args = this.#args(after, limit);
    return inventoryPage(this.#s.boxes.all(args.after, args.limit + 1).map(overviewOf), args.limit, (r) => r.recipient);
  }

  async sessions(after: string | undefined, limit: number): Promise<InventoryPage<SessionRecord>> {
    const args = this.#args(after, limit);
    const rows = this.#s.sessions.all(args.after, args.limit + 1).map(decodeSession);
    return inventoryPage(rows, args.limit, (r) => r.id);
  }

  #args(after: string | undefined, limit: number) {
    if (this.#closed()) throw new StoreClosedError();
    return inventoryArgs(after, limit);
  }
}
