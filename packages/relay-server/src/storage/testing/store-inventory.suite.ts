import type { SessionRecord } from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BoxLimits,
  type BoxStore,
  compareKeys,
  type QueueStore,
  StoreClosedError,
  StoreInputError,
  type StoreInventory,
} from '../../index.js';
import { purgeBox, purgeQueue } from '../contracts/store-purge.js';
import { event, party } from './events.js';
import { type Harness, Harnesses } from './harness.js';
import { aliceSession as session } from './session-records.js';

/** The stores an inventory reads, opened together on one storage. */
export interface InventoryStores {
  readonly queue: QueueStore;
  readonly box: BoxStore;
  readonly sessions: { create(session: SessionRecord): Promise<void>; delete(id: string): Promise<void> };
  readonly inventory: StoreInventory;
}

/** Opens a fresh, empty storage whose box has `box` as its limits. */
export type InventoryFactory = (box: Partial<BoxLimits>) => Promise<Harness<InventoryStores>>;

const HOUR = 3600_000;
const BOX = { directory: false, strangerBits: 4 } as const;
const later = () => ({ expiresAt: Date.now() + HOUR });
const caps = { maxQueued: 100, maxBytes: 1 << 20, maxQueuedPerSender: 100, maxBytesPerSender: 1 << 20 };

let n = 0;
function message(sender = 'did:key:z6MkAlice') {
  const id = `inv-${++n}`;
  return { id, sender, body: JSON.stringify({ id, body: 'x'.repeat(n % 7) }) };
}

/**
 * The adapter suite of `StoreInventory` and of `purgeQueue` / `purgeBox` over the stores'
 * own operations: what `wmp-relay admin queues`, `purge` and `sessions` read and do. Every adapter
 * runs exactly this; `durable` adapters also show arrival times surviving a reopen.
 */
export function storeInventorySuite(name: string, factory: InventoryFactory, durable = false): void {
  describe(`StoreInventory: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async () => harnesses.open(BOX);

    it('lists the queues and outboxes holding messages, by key, with counts, bytes and the oldest arrival', async () => {
      const { store } = await open();
      const { queue, inventory } = store;
      expect(await inventory.queues(undefined, 10)).toEqual({ items: [], next: undefined });
      const before = Date.now();
      const bob = [message(), message()];
      for (const m of bob) await queue.append('did:key:z6MkBob', m, later());
      await queue.append('did:key:z6MkAnn', message(), later());
      await queue.appendToPart('relay:https://b.example', message(), { ...later(), part: 'did:key:z6MkDan', caps });
      // A queue emptied by its acknowledgements is not listed (its row stays, for its seqs).
      const gone = message();
      await queue.append('did:key:z6MkGone', gone, later());
      await queue.ack('did:key:z6MkGone', [gone.id]);
      const after = Date.now();

      const page = await inventory.queues(undefined, 10);
      expect(page.next).toBeUndefined();
      expect(page.items.map((q) => q.recipient)).toEqual([
        'did:key:z6MkAnn',
        'did:key:z6MkBob',
        'relay:https://b.example',
      ]);
      for (const item of page.items) {
        expect(item).toEqual({
          ...(await queue.stats(item.recipient)),
          recipient: item.recipient,
          oldestAt: item.oldestAt,
        });
        expect(item.oldestAt).toBeGreaterThanOrEqual(before - 1000);
        expect(item.oldestAt).toBeLessThanOrEqual(after + 1000);
      }
      expect(page.items[1]!.count).toBe(2);
    });

    it('pages by key: `next` is the last key when more follow, and reading on from it gives the rest', async () => {
      const { store } = await open();
      const keys = ['did:key:z6Mkc', 'did:key:z6Mka', 'did:key:z6Mkb', 'did:key:z6Mke', 'did:key:z6Mkd'];
      for (const key of keys) await store.queue.append(key, message(), later());
      const first = await store.inventory.queues(undefined, 2);
      expect(first.items.map((q) => q.recipient)).toEqual(['did:key:z6Mka', 'did:key:z6Mkb']);
      expect(first.next).toBe('did:key:z6Mkb');
      const second = await store.inventory.queues(first.next, 2);
      expect(second.items.map((q) => q.recipient)).toEqual(['did:key:z6Mkc', 'did:key:z6Mkd']);
      const last = await store.inventory.queues(second.next, 2);
      expect(last).toEqual({ items: [expect.objectContaining({ recipient: 'did:key:z6Mke' })], next: undefined });
      // Byte order, whatever the database's locale: upper case before lower case, "Z" before "a".
      await store.queue.append('did:key:Z', message(), later());
      const all = (await store.inventory.queues(undefined, 500)).items.map((q) => q.recipient);
      expect(all).toEqual([...all].sort(compareKeys));
      expect(all[0]).toBe('did:key:Z');
    });

    it('refuses a limit that is not a positive integer and clamps a large one to 500', async () => {
      const { store } = await open();
      await expect(store.inventory.queues(undefined, 0)).rejects.toBeInstanceOf(StoreInputError);
      await expect(store.inventory.boxes(undefined, 1.5)).rejects.toBeInstanceOf(StoreInputError);
      await expect(store.inventory.sessions(undefined, -1)).rejects.toBeInstanceOf(StoreInputError);
      for (let i = 0; i < 3; i++) await store.queue.append(`did:key:z6Mk${i}`, message(), later());
      expect((await store.inventory.queues(undefined, 10_000)).items).toHaveLength(3);
    });

    it('lists the box recipients holding events, with counts, bytes and the oldest arrival', async () => {
      const { store } = await open();
      const [alice, bob, carol] = [party(), party(), party()];
      const before = Date.now();
      for (const to of [bob, bob, carol]) {
        expect((await store.box.publish(await event(alice, to, { bits: 4 }))).status).toBe('stored');
      }
      const after = Date.now();
      const page = await store.inventory.boxes(undefined, 10);
      expect(page.items.map((b) => b.recipient)).toEqual([bob.key, carol.key].sort(compareKeys));
      for (const item of page.items) {
        const stats = await store.box.recipientStats(item.recipient);
        expect(item).toMatchObject({ count: stats.count, bytes: stats.bytes });
        expect(item.oldestAt).toBeGreaterThanOrEqual(before - 1000);
        expect(item.oldestAt).toBeLessThanOrEqual(after + 1000);
      }
      // Delivered events leave the list with their recipient's last one.
      const carols = await store.box.fetch(carol.key, 0, 10);
      await store.box.delivered(
        carol.key,
        carols.events.map((e) => e.id),
      );
      expect((await store.inventory.boxes(undefined, 10)).items.map((b) => b.recipient)).toEqual([bob.key]);
    });

    it('lists sessions by id, pages them, and forgets deleted ones', async () => {
      const { store } = await open();
      for (const id of ['ses-c', 'ses-a', 'ses-b']) await store.sessions.create(session(id));
      const first = await store.inventory.sessions(undefined, 2);
      expect(first.items.map((s) => s.id)).toEqual(['ses-a', 'ses-b']);
      expect(first.items[0]).toEqual(
        session('ses-a', { createdAt: first.items[0]!.createdAt, expiresAt: first.items[0]!.expiresAt }),
      );
      expect((await store.inventory.sessions(first.next, 2)).items.map((s) => s.id)).toEqual(['ses-c']);
      await store.sessions.delete('ses-b');
      expect((await store.inventory.sessions(undefined, 10)).items.map((s) => s.id)).toEqual(['ses-a', 'ses-c']);
    });

    it('purges one queue through its acknowledgements: every count exact, the other queues untouched', async () => {
      const { store } = await open();
      const { queue } = store;
      const many = Array.from({ length: 620 }, (_, i) => message(`did:key:z6MkEve${i % 4}`));
      for (const m of many) await queue.append('did:key:z6MkBob', m, later());
      // An expired message is purged too.
      await queue.append('did:key:z6MkBob', message(), { expiresAt: Date.now() - 1 });
      await queue.append('did:key:z6MkAnn', message(), later());
      const removed = await purgeQueue(queue, 'did:key:z6MkBob');
      expect(removed).toHaveLength(621);
      expect(removed.map((r) => r.seq)).toEqual(Array.from({ length: 621 }, (_, i) => i + 1));
      expect(await queue.stats('did:key:z6MkBob')).toEqual({ count: 0, bytes: 0 });
      expect(await queue.totals()).toEqual(await queue.stats('did:key:z6MkAnn'));
      // Seqs go on after a purge (never reused).
      expect(await queue.append('did:key:z6MkBob', message(), later())).toEqual({ status: 'queued', seq: 622 });
      expect(await purgeQueue(queue, 'did:key:z6MkNobody')).toEqual([]);
    });

    it('purges an outbox with its parts', async () => {
      const { store } = await open();
      const outbox = 'relay:https://b.example';
      for (const part of ['did:key:z6MkDan', 'did:key:z6MkDan', 'did:key:z6MkEd']) {
        await store.queue.appendToPart(outbox, message(), { ...later(), part, caps });
      }
      expect(await purgeQueue(store.queue, outbox)).toHaveLength(3);
      expect(await store.queue.partStats(outbox, 'did:key:z6MkDan')).toEqual({ count: 0, bytes: 0 });
      expect(await store.queue.totals()).toEqual({ count: 0, bytes: 0 });
    });

    it("purges one recipient's box: its events gone, the totals exact", async () => {
      const { store } = await open();
      const [alice, bob, carol] = [party(), party(), party()];
      for (const to of [bob, bob, carol]) await store.box.publish(await event(alice, to, { bits: 4 }));
      expect(await purgeBox(store.box, bob.key)).toBe(2);
      expect(await store.box.recipientStats(bob.key)).toEqual({ count: 0, bytes: 0 });
      expect(await store.box.senderStats(alice.key)).toEqual(await store.box.recipientStats(carol.key));
      expect(await store.box.totals()).toEqual(await store.box.recipientStats(carol.key));
      expect(await purgeBox(store.box, bob.key)).toBe(0);
    });

    it('is refused once the storage is closed', async () => {
      const harness = await open();
      await harness.close();
      await expect(harness.store.inventory.queues(undefined, 10)).rejects.toBeInstanceOf(StoreClosedError);
    });

    if (durable) {
      it('keeps arrival times across a reopen', async () => {
        const harness = await open();
        await harness.store.queue.append('did:key:z6MkBob', message(), later());
        const before = (await harness.store.inventory.queues(undefined, 10)).items;
        const reopened = await harnesses.reopen(harness);
        expect((await reopened.store.inventory.queues(undefined, 10)).items).toEqual(before);
      });
    }
  });
}
