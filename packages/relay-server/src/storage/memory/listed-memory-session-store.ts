import { MemorySessionStore, type SessionRecord } from '@wmp/session';
import { compareKeys, type InventoryPage, inventoryArgs, inventoryPage } from '../contracts/store-inventory.js';

/**
 * `MemorySessionStore` of @wmp/session (the store the session engine is tested with) that can also
 * list its sessions by id (`StoreInventory.sessions`): it remembers the ids it was given and drops
 * those the store no longer has (deleted, swept) when it lists.
 */
export class ListedMemorySessionStore extends MemorySessionStore {
  readonly #ids = new Set<string>();

  override async create(session: SessionRecord): Promise<void> {
    await super.create(session);
    this.#ids.add(session.id);
  }

  override async delete(id: string): Promise<void> {
    await super.delete(id);
    this.#ids.delete(id);
  }

  async list(after: string | undefined, limit: number): Promise<InventoryPage<SessionRecord>> {
    const args = inventoryArgs(after, limit);
    const rows: SessionRecord[] = [];
    for (const id of [...this.#ids].filter((id) => compareKeys(id, args.after) > 0).sort(compareKeys)) {
      const session = await this.get(id);
      if (session === undefined) this.#ids.delete(id);
      else rows.push(session);
      if (rows.length > args.limit) break;
    }
    return inventoryPage(rows, args.limit, (row) => row.id);
  }
}
