import { afterEach, describe, expect, it } from 'vitest';
import { type QueueLimits, type QueueMessageInput, type QueueStore, StoreInputError } from '../../index.js';
import { type Harness, Harnesses } from './harness.js';

type QueueFactory = (limits: Partial<QueueLimits>) => Promise<Harness<QueueStore>>;

const BOB = 'did:key:z6MkBob';
const CAROL = 'did:key:z6MkCarol';
const ALICE = 'did:key:z6MkAlice';
const HOUR = 3600_000;
const LEASE = 30_000;

let n = 0;
function msg(id = `due-${++n}`): QueueMessageInput {
  return { id, sender: ALICE, body: JSON.stringify({ jsonrpc: '2.0', method: 'wmp.message.deliver', params: { id } }) };
}

/**
 * Messages held for later (`dueAt`, scheduled delivery) and reads by id: `claimDue` hands each
 * due message to one caller per lease, earliest due first, across every queue.
 */
export function queueDueSuite(name: string, factory: QueueFactory, durable: boolean): void {
  describe(`QueueStore due messages: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async () => (await harnesses.open({})).store;
    const ids = (messages: readonly { id: string }[]) => messages.map((m) => m.id).sort();

    it('get reads one message of one recipient by id, whatever its due time', async () => {
      const queue = await open();
      const now = Date.now();
      const a = msg();
      await queue.append(BOB, a, { expiresAt: now + HOUR, dueAt: now + HOUR / 2 });
      expect(await queue.get(BOB, a.id)).toMatchObject({ recipient: BOB, id: a.id, sender: ALICE, body: a.body });
      expect(await queue.get(CAROL, a.id)).toBeUndefined();
      expect(await queue.get(BOB, 'nope')).toBeUndefined();
      // A held message is in its queue as any other: read, counted, acknowledged.
      expect((await queue.after(BOB, undefined, 10)).messages.map((m) => m.id)).toEqual([a.id]);
      expect(await queue.stats(BOB)).toMatchObject({ count: 1 });
    });

    it('claims only what is due and unexpired, each once per lease, then again when the lease is out', async () => {
      const queue = await open();
      const now = Date.now();
      const due = msg();
      const later = msg();
      const plain = msg();
      const gone = msg();
      await queue.append(BOB, due, { expiresAt: now + HOUR, dueAt: now - 1 });
      await queue.append(BOB, later, { expiresAt: now + HOUR, dueAt: now + 60_000 });
      await queue.append(CAROL, plain, { expiresAt: now + HOUR });
      await queue.append(CAROL, gone, { expiresAt: now - 1, dueAt: now - 10 });
      const first = await queue.claimDue(now, 10, LEASE);
      expect(ids(first)).toEqual([due.id]);
      expect(first[0]).toMatchObject({ recipient: BOB, id: due.id, body: due.body, sender: ALICE });
      expect(await queue.claimDue(now + LEASE - 1, 10, LEASE)).toEqual([]);
      // The claimer died: after the lease it is due again; by then `later` is due too.
      expect(ids(await queue.claimDue(now + 60_000, 10, LEASE))).toEqual(ids([due, later]));
      // Removed (acknowledged, or routed on): never claimed again.
      await queue.ack(BOB, [due.id, later.id]);
      expect(await queue.claimDue(now + 10 * HOUR - 1, 10, LEASE)).toEqual([]);
    });

    it('hands out the earliest due first, across recipients, at most `limit`', async () => {
      const queue = await open();
      const now = Date.now();
      const m = Array.from({ length: 5 }, () => msg());
      // Appended out of due order, over two queues.
      const order = [3, 0, 4, 1, 2];
      for (const [i, k] of order.entries()) {
        await queue.append(i % 2 ? BOB : CAROL, m[k]!, { expiresAt: now + HOUR, dueAt: now - 1000 + k });
      }
      expect(ids(await queue.claimDue(now, 2, LEASE))).toEqual(ids([m[0]!, m[1]!]));
      expect(ids(await queue.claimDue(now, 2, LEASE))).toEqual(ids([m[2]!, m[3]!]));
      expect(ids(await queue.claimDue(now, 2, LEASE))).toEqual(ids([m[4]!]));
    });

    it('never hands one message to two concurrent claims', async () => {
      const queue = await open();
      const now = Date.now();
      const m = Array.from({ length: 20 }, () => msg());
      await Promise.all(m.map((x, i) => queue.append(i % 2 ? BOB : CAROL, x, { expiresAt: now + HOUR, dueAt: now })));
      const claims = await Promise.all(Array.from({ length: 4 }, () => queue.claimDue(now, 7, LEASE)));
      const all = claims.flat().map((x) => x.id);
      expect(new Set(all).size).toBe(all.length);
      expect(all.sort()).toEqual(ids(m));
    });

    it('refuses bad arguments with StoreInputError', async () => {
      const queue: QueueStore = await open();
      const expiresAt = Date.now() + HOUR;
      await expect(queue.append(BOB, msg(), { expiresAt, dueAt: 1.5 })).rejects.toBeInstanceOf(StoreInputError);
      await expect(queue.claimDue(Date.now(), 0, LEASE)).rejects.toBeInstanceOf(StoreInputError);
      await expect(queue.claimDue(Date.now(), 10, -1)).rejects.toBeInstanceOf(StoreInputError);
      await expect(queue.claimDue(Number.NaN, 10, LEASE)).rejects.toBeInstanceOf(StoreInputError);
    });

    if (durable)
      it('keeps due times across a reopen (a restart loses no scheduled message)', async () => {
        const h = await harnesses.open({});
        if (!h.reopen) throw new Error('a durable adapter must reopen');
        const now = Date.now();
        const a = msg();
        await h.store.append(BOB, a, { expiresAt: now + HOUR, dueAt: now + 1000 });
        const again = (await harnesses.reopen(h)).store;
        expect(await again.claimDue(now, 10, LEASE)).toEqual([]);
        expect(ids(await again.claimDue(now + 1000, 10, LEASE))).toEqual([a.id]);
      });
  });
}
