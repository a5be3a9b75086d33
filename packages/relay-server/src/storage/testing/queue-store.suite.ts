import { QueueFullError as WmpQueueFullError } from '@wmp/jsonrpc-envelope';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type QueueLimits,
  type QueueMessageInput,
  type QueueStore,
  RelayQueueFullError,
  StoreClosedError,
  StoreInputError,
} from '../../index.js';
import { type Harness, Harnesses } from './harness.js';
import { queueDueSuite } from './queue-store-due.suite.js';
import { queuePartsSuite } from './queue-store-parts.suite.js';

export type QueueFactory = (limits: Partial<QueueLimits>) => Promise<Harness<QueueStore>>;

const BOB = 'did:key:z6MkBob';
const CAROL = 'did:key:z6MkCarol';
const ALICE = 'did:key:z6MkAlice';
const HOUR = 3600_000;

let n = 0;
/** A routed deliver as the relay would queue it. */
function msg(sender = ALICE, id = `msg-${++n}`): QueueMessageInput {
  const body = JSON.stringify({ jsonrpc: '2.0', method: 'wmp.message.deliver', params: { wmp: { sender }, body: id } });
  return { id, sender, body };
}

const later = () => ({ expiresAt: Date.now() + 24 * HOUR });

/**
 * The adapter suite of `QueueStore` (docs/architecture.md, "Storage"): the durable per-recipient
 * WMP queue. Every adapter runs exactly this; `factory` opens a fresh, empty queue with the given
 * limits.
 */
export function queueStoreSuite(name: string, factory: QueueFactory, durable = false): void {
  describe(`QueueStore: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (limits: Partial<QueueLimits> = {}) => (await harnesses.open(limits)).store;

    async function ids(queue: QueueStore, recipient: string): Promise<string[]> {
      return (await queue.after(recipient, undefined, 500)).messages.map((m) => m.id);
    }

    describe('append and read', () => {
      it('assigns per-recipient seqs from 1 and reads them back in order, exactly', async () => {
        const queue = await open();
        const m = [msg(), msg(), msg()];
        const expiresAt = Date.now() + HOUR;
        expect(await queue.append(BOB, m[0]!, { expiresAt })).toEqual({ status: 'queued', seq: 1 });
        expect(await queue.append(CAROL, m[1]!, { expiresAt })).toEqual({ status: 'queued', seq: 1 });
        expect(await queue.append(BOB, m[2]!, { expiresAt, bytes: 10 })).toEqual({ status: 'queued', seq: 2 });
        const page = await queue.after(BOB, undefined, 10);
        expect(page).toEqual({
          messages: [
            {
              recipient: BOB,
              seq: 1,
              ...m[0]!,
              expiresAt,
              bytes: Buffer.byteLength(m[0]!.body),
              delivered: false,
              notify: false,
              evidence: false,
            },
            {
              recipient: BOB,
              seq: 2,
              ...m[2]!,
              expiresAt,
              bytes: 10,
              delivered: false,
              notify: false,
              evidence: false,
            },
          ],
          next: 2,
          more: false,
        });
        expect(await ids(queue, CAROL)).toEqual([m[1]!.id]);
      });

      it('reads after a seq or after a message id, in pages with next and more', async () => {
        const queue = await open();
        const m = Array.from({ length: 5 }, () => msg());
        for (const x of m) await queue.append(BOB, x, later());
        const p1 = await queue.after(BOB, 0, 2);
        expect([p1.messages.map((x) => x.id), p1.next, p1.more]).toEqual([[m[0]!.id, m[1]!.id], 2, true]);
        const p2 = await queue.after(BOB, p1.next, 2);
        expect([p2.messages.map((x) => x.seq), p2.next, p2.more]).toEqual([[3, 4], 4, true]);
        const byId = await queue.after(BOB, m[3]!.id, 10);
        expect([byId.messages.map((x) => x.id), byId.next, byId.more]).toEqual([[m[4]!.id], 5, false]);
        expect(await queue.after(BOB, 5, 10)).toEqual({ messages: [], next: 5, more: false });
        // An id that is not queued (acknowledged, or never there) replays everything unacknowledged.
        expect((await queue.after(BOB, 'msg-unknown', 10)).messages).toHaveLength(5);
        // A message id of another recipient is not a cursor into this queue.
        await queue.append(CAROL, msg(ALICE, 'carol-only'), later());
        expect((await queue.after(BOB, 'carol-only', 10)).messages).toHaveLength(5);
      });

      it('is idempotent on the message id per recipient', async () => {
        const queue = await open();
        const m = msg();
        expect(await queue.append(BOB, m, later())).toEqual({ status: 'queued', seq: 1 });
        expect(await queue.append(BOB, { ...m, body: '{"other":1}' }, later())).toEqual({ status: 'exists', seq: 1 });
        expect(await queue.stats(BOB)).toEqual({ count: 1, bytes: Buffer.byteLength(m.body) });
        expect((await queue.after(BOB, undefined, 10)).messages[0]!.body).toBe(m.body);
        // The same id for another recipient is another message (group fan-out).
        expect(await queue.append(CAROL, m, later())).toEqual({ status: 'queued', seq: 1 });
      });

      it('refuses bad arguments with StoreInputError', async () => {
        const queue = await open();
        await expect(queue.append(BOB, { id: '', sender: ALICE, body: '' }, later())).rejects.toBeInstanceOf(
          StoreInputError,
        );
        await expect(queue.append(BOB, msg(), { expiresAt: Number.NaN })).rejects.toBeInstanceOf(StoreInputError);
        await expect(queue.append(BOB, msg(), { ...later(), bytes: -1 })).rejects.toBeInstanceOf(StoreInputError);
        await expect(queue.after(BOB, -1, 10)).rejects.toBeInstanceOf(StoreInputError);
        await expect(queue.after(BOB, 0, 0)).rejects.toBeInstanceOf(StoreInputError);
        await expect(queue.ack(BOB, Array(501).fill('x'))).rejects.toBeInstanceOf(StoreInputError);
        await expect(queue.sweepExpired(Date.now(), 0)).rejects.toBeInstanceOf(StoreInputError);
        expect(await queue.totals()).toEqual({ count: 0, bytes: 0 });
      });
    });

    describe('caps', () => {
      it('refuses the message after max_queued with RelayQueueFullError (-31014)', async () => {
        const queue = await open({ maxQueued: 3 });
        for (let i = 0; i < 3; i++) await queue.append(BOB, msg(`did:key:z6MkS${i}`), later());
        const full = await queue.append(BOB, msg('did:key:z6MkS9'), later()).catch((e: unknown) => e);
        expect(full).toBeInstanceOf(RelayQueueFullError);
        expect(full).toBeInstanceOf(WmpQueueFullError);
        expect(full).toMatchObject({ code: -31014, message: 'Queue full', reason: 'max_queued' });
        // A retry of a queued message is still answered; other recipients are not affected.
        expect((await queue.append(CAROL, msg(), later())).status).toBe('queued');
        expect(await queue.stats(BOB)).toMatchObject({ count: 3 });
        // Acknowledging one makes room for one.
        await queue.ack(BOB, [(await queue.after(BOB, undefined, 1)).messages[0]!.id]);
        expect((await queue.append(BOB, msg('did:key:z6MkS0'), later())).status).toBe('queued');
      });

      it('refuses a message that would exceed the byte cap (max_bytes)', async () => {
        const queue = await open({ maxBytes: 1000, maxBytesPerSender: 1000 });
        expect((await queue.append(BOB, msg(), { ...later(), bytes: 600 })).status).toBe('queued');
        expect((await queue.append(BOB, msg(CAROL), { ...later(), bytes: 400 })).status).toBe('queued');
        await expect(queue.append(BOB, msg(), { ...later(), bytes: 1 })).rejects.toMatchObject({ reason: 'max_bytes' });
        expect(await queue.stats(BOB)).toEqual({ count: 2, bytes: 1000 });
      });

      it("gives each sender only a share of a recipient's queue (a quarter by default)", async () => {
        const queue = await open({ maxQueued: 8, maxBytes: 4000 });
        expect(queue.limits).toMatchObject({ maxQueuedPerSender: 2, maxBytesPerSender: 1000 });
        for (let i = 0; i < 2; i++) await queue.append(BOB, msg(), later());
        const refused = await queue.append(BOB, msg(), later()).catch((e: unknown) => e);
        expect(refused).toMatchObject({ code: -31014, reason: 'sender_share' });
        // Nobody else's part is taken: Carol still sends to Bob, and Alice to Carol.
        expect((await queue.append(BOB, msg(CAROL), later())).status).toBe('queued');
        expect((await queue.append(CAROL, msg(), later())).status).toBe('queued');
        await expect(queue.append(BOB, msg(CAROL), { ...later(), bytes: 1001 })).rejects.toMatchObject({
          reason: 'sender_share',
        });
        // An acknowledgement gives the sender its room back.
        await queue.ack(BOB, [(await queue.after(BOB, undefined, 1)).messages[0]!.id]);
        expect((await queue.append(BOB, msg(), later())).status).toBe('queued');
        expect(await queue.stats(BOB)).toMatchObject({ count: 3 });
      });

      it('bounds the bytes of the whole store (maxTotalBytes), every recipient together', async () => {
        const queue = await open({ maxTotalBytes: 1500, maxBytes: 1000, maxBytesPerSender: 1000 });
        await queue.append(BOB, msg(), { ...later(), bytes: 800 });
        await queue.append(CAROL, msg(), { ...later(), bytes: 600 });
        await expect(queue.append(ALICE, msg(CAROL), { ...later(), bytes: 101 })).rejects.toMatchObject({
          code: -31014,
          reason: 'total_bytes',
        });
        expect(await queue.totals()).toEqual({ count: 2, bytes: 1400 });
        await queue.sweepExpired(Number.MAX_SAFE_INTEGER, 10);
        expect((await queue.append(ALICE, msg(CAROL), { ...later(), bytes: 1000 })).status).toBe('queued');
      });

      it('checks the cap atomically with the insert under concurrent appends', async () => {
        const queue = await open({ maxQueued: 5, maxQueuedPerSender: 5 });
        const results = await Promise.allSettled(Array.from({ length: 12 }, () => queue.append(BOB, msg(), later())));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
        expect(
          results.every((r) => r.status === 'fulfilled' || (r.reason as RelayQueueFullError).reason === 'max_queued'),
        ).toBe(true);
        expect(await queue.stats(BOB)).toMatchObject({ count: 5 });
        expect((await queue.after(BOB, undefined, 10)).messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
      });
    });

    describe('delivered marks', () => {
      it('remembers whether the sender asked for statuses, through every read and removal', async () => {
        const queue = await open();
        await queue.append(BOB, { ...msg(), notify: true }, later());
        await queue.append(BOB, msg(), later());
        expect((await queue.after(BOB, undefined, 10)).messages.map((m) => m.notify)).toEqual([true, false]);
        expect((await queue.markDelivered(BOB, [1, 2])).map((r) => r.notify)).toEqual([true, false]);
        expect((await queue.sweepExpired(Number.MAX_SAFE_INTEGER, 10)).map((r) => r.notify)).toEqual([true, false]);
      });

      it('remembers whether a message is under evidence, through every read and removal', async () => {
        const queue = await open();
        await queue.append(BOB, msg(), later());
        await queue.append(BOB, { ...msg(), evidence: true }, later());
        await queue.append(BOB, { ...msg(), evidence: true, notify: true }, later());
        const flags = (list: readonly { evidence: boolean }[]) => list.map((m) => m.evidence);
        expect(flags((await queue.after(BOB, undefined, 10)).messages)).toEqual([false, true, true]);
        expect(flags(await queue.markDelivered(BOB, [1, 2]))).toEqual([false, true]);
        const m = (await queue.after(BOB, undefined, 10)).messages;
        expect(flags(await queue.ack(BOB, [m[1]!.id]))).toEqual([true]);
        expect(flags(await queue.sweepExpired(Number.MAX_SAFE_INTEGER, 10))).toEqual([false, true]);
      });

      it('marks a message delivered once, keeps it queued, and tells removals whether it was', async () => {
        const queue = await open();
        const m = [msg(), msg(CAROL), msg()];
        for (const x of m) await queue.append(BOB, x, later());
        expect(await queue.undelivered(BOB, Date.now())).toBe(3);
        expect(await queue.markDelivered(BOB, [3, 1, 1])).toEqual([
          { recipient: BOB, seq: 1, id: m[0]!.id, sender: ALICE, delivered: false, notify: false, evidence: false },
          { recipient: BOB, seq: 3, id: m[2]!.id, sender: ALICE, delivered: false, notify: false, evidence: false },
        ]);
        // A second write of the same message (another connection, a resume) marks nothing new.
        expect(await queue.markDelivered(BOB, [1, 3, 99])).toEqual([]);
        expect(await queue.markDelivered(CAROL, [2])).toEqual([]);
        expect(await queue.undelivered(BOB, Date.now())).toBe(1);
        expect(await queue.undelivered(BOB, Date.now(), CAROL)).toBe(0);
        const page = await queue.after(BOB, undefined, 10);
        expect(page.messages.map((x) => [x.seq, x.delivered])).toEqual([
          [1, true],
          [2, false],
          [3, true],
        ]);
        expect((await queue.ack(BOB, [m[0]!.id, m[1]!.id])).map((r) => [r.seq, r.delivered])).toEqual([
          [1, true],
          [2, false],
        ]);
        expect((await queue.sweepExpired(Number.MAX_SAFE_INTEGER, 10)).map((r) => [r.seq, r.delivered])).toEqual([
          [3, true],
        ]);
        await expect(queue.markDelivered(BOB, [0])).rejects.toBeInstanceOf(StoreInputError);
      });
    });

    describe('acknowledgement', () => {
      it("ack removes only the caller's named messages and returns them in seq order", async () => {
        const queue = await open();
        const m = [msg(), msg(CAROL), msg()];
        for (const x of m) await queue.append(BOB, x, later());
        const carols = msg();
        await queue.append(CAROL, carols, later());
        // Bob names Carol's message: nothing of Carol's goes.
        expect(await queue.ack(BOB, [carols.id])).toEqual([]);
        expect(await ids(queue, CAROL)).toEqual([carols.id]);
        expect(await queue.ack(BOB, [m[2]!.id, m[1]!.id, m[1]!.id, 'msg-unknown'])).toEqual([
          { recipient: BOB, seq: 2, id: m[1]!.id, sender: CAROL, delivered: false, notify: false, evidence: false },
          { recipient: BOB, seq: 3, id: m[2]!.id, sender: ALICE, delivered: false, notify: false, evidence: false },
        ]);
        expect(await ids(queue, BOB)).toEqual([m[0]!.id]);
        expect(await queue.stats(BOB)).toEqual({ count: 1, bytes: Buffer.byteLength(m[0]!.body) });
        expect(await queue.ack(BOB, [])).toEqual([]);
      });

      it('ackThrough removes up to and including the message (a resume), only for the caller', async () => {
        const queue = await open();
        const m = Array.from({ length: 4 }, () => msg());
        for (const x of m) await queue.append(BOB, x, later());
        await queue.append(CAROL, msg(ALICE, 'c1'), later());
        expect(await queue.ackThrough(CAROL, m[1]!.id)).toEqual([]);
        expect((await queue.ackThrough(BOB, m[1]!.id)).map((r) => r.seq)).toEqual([1, 2]);
        expect(await ids(queue, BOB)).toEqual([m[2]!.id, m[3]!.id]);
        expect(await queue.ackThrough(BOB, m[1]!.id)).toEqual([]);
        expect(await ids(queue, CAROL)).toEqual(['c1']);
      });

      it('never reuses a seq, even after the queue emptied', async () => {
        const queue = await open();
        const m = [msg(), msg()];
        for (const x of m) await queue.append(BOB, x, later());
        await queue.ack(
          BOB,
          m.map((x) => x.id),
        );
        expect(await queue.stats(BOB)).toEqual({ count: 0, bytes: 0 });
        expect(await queue.append(BOB, msg(), later())).toEqual({ status: 'queued', seq: 3 });
      });

      it('keeps the store totals equal to the sum of the queues', async () => {
        const queue = await open();
        for (let i = 0; i < 4; i++) await queue.append(i % 2 ? BOB : CAROL, msg(), { ...later(), bytes: 100 + i });
        expect(await queue.totals()).toEqual({ count: 4, bytes: 406 });
        await queue.ackThrough(BOB, (await queue.after(BOB, undefined, 1)).messages[0]!.id);
        expect(await queue.totals()).toEqual({ count: 3, bytes: 305 });
        expect((await queue.stats(BOB)).bytes + (await queue.stats(CAROL)).bytes).toBe(305);
      });
    });

    describe('recipients by prefix', () => {
      it('lists the recipients under a prefix that hold messages now, at most `limit`', async () => {
        const queue = await open();
        const [a, b, c] = ['relay:https://a.example', 'relay:https://b.example', 'relay:https://c.example'];
        for (const r of [a, b, 'relay_x', BOB]) await queue.append(r, msg(), later());
        const gone = msg();
        await queue.append(c, gone, later());
        await queue.ack(c, [gone.id]);
        expect((await queue.recipientsWithPrefix('relay:', 10)).sort()).toEqual([a, b]);
        expect(await queue.recipientsWithPrefix('relay:', 1)).toHaveLength(1);
        // A prefix is text, never a pattern.
        expect(await queue.recipientsWithPrefix('rel_y:', 10)).toEqual([]);
        expect(await queue.recipientsWithPrefix('%', 10)).toEqual([]);
        await expect(queue.recipientsWithPrefix('', 10)).rejects.toBeInstanceOf(StoreInputError);
        await expect(queue.recipientsWithPrefix('relay:', 0)).rejects.toBeInstanceOf(StoreInputError);
      });
    });

    describe('expiry', () => {
      it('sweeps in bounded batches, earliest first, returning what expired for the statuses', async () => {
        const queue = await open();
        const now = Date.now();
        const late = msg(ALICE, 'late');
        const early = msg(CAROL, 'early');
        const middle = msg(ALICE, 'middle');
        const keep = msg(ALICE, 'keep');
        await queue.append(BOB, late, { expiresAt: now + 3 * HOUR });
        await queue.append(CAROL, early, { expiresAt: now + HOUR });
        await queue.append(BOB, middle, { expiresAt: now + 2 * HOUR });
        await queue.append(BOB, keep, { expiresAt: now + 10 * HOUR });
        const at = now + 4 * HOUR;
        // Expired but not yet swept: a read with the clock skips them.
        expect((await queue.after(BOB, undefined, 10, at)).messages.map((m) => m.id)).toEqual(['keep']);
        expect(await queue.after(BOB, undefined, 1, at)).toMatchObject({ next: 3, more: false });
        expect(await queue.sweepExpired(at, 2)).toEqual([
          { recipient: CAROL, seq: 1, id: 'early', sender: CAROL, delivered: false, notify: false, evidence: false },
          { recipient: BOB, seq: 2, id: 'middle', sender: ALICE, delivered: false, notify: false, evidence: false },
        ]);
        expect(await queue.sweepExpired(at, 2)).toEqual([
          { recipient: BOB, seq: 1, id: 'late', sender: ALICE, delivered: false, notify: false, evidence: false },
        ]);
        expect(await queue.sweepExpired(at, 2)).toEqual([]);
        expect(await ids(queue, BOB)).toEqual(['keep']);
        expect(await queue.totals()).toEqual({ count: 1, bytes: Buffer.byteLength(keep.body) });
      });

      it('a message is expired at its expiresAt, not before', async () => {
        const queue = await open();
        const expiresAt = Date.now() + HOUR;
        await queue.append(BOB, msg(), { expiresAt });
        expect(await queue.sweepExpired(expiresAt - 1, 10)).toEqual([]);
        expect(await queue.sweepExpired(expiresAt, 10)).toHaveLength(1);
      });
    });

    it('refuses every call once closed', async () => {
      const h = await harnesses.open({});
      await h.close();
      await expect(h.store.append(BOB, msg(), later())).rejects.toBeInstanceOf(StoreClosedError);
      await expect(h.store.after(BOB, undefined, 1)).rejects.toBeInstanceOf(StoreClosedError);
      await expect(h.store.stats(BOB)).rejects.toBeInstanceOf(StoreClosedError);
    });

    // Only durable adapters reopen: the memory run has no such test at all.
    if (durable)
      it('survives close and reopen: every acknowledged append is there, in order, seqs continue', async () => {
        const h = await harnesses.open({});
        if (!h.reopen) throw new Error('a durable adapter must reopen');
        const queue = h.store;
        const m = Array.from({ length: 50 }, () => msg());
        await Promise.all(m.map((x) => queue.append(BOB, x, later())));
        await queue.append(CAROL, msg(), later());
        await queue.ack(BOB, [m[49]!.id]);
        const before = {
          bob: await queue.after(BOB, undefined, 500),
          carol: await queue.after(CAROL, undefined, 500),
          totals: await queue.totals(),
        };
        const again = (await harnesses.reopen(h)).store;
        expect(await again.after(BOB, undefined, 500)).toEqual(before.bob);
        expect(await again.after(CAROL, undefined, 500)).toEqual(before.carol);
        expect(await again.totals()).toEqual(before.totals);
        expect(await again.append(BOB, msg(), later())).toEqual({ status: 'queued', seq: 51 });
      });

    if (durable)
      it("keeps each sender's part of a queue across a reopen", async () => {
        const h = await harnesses.open({ maxQueued: 8 });
        for (let i = 0; i < 2; i++) await h.store.append(BOB, msg(), later());
        const again = (await harnesses.reopen(h)).store;
        await expect(again.append(BOB, msg(), later())).rejects.toMatchObject({ reason: 'sender_share' });
        expect((await again.append(BOB, msg(CAROL), later())).status).toBe('queued');
      });
  });
  // The partitioned queue (a peer relay's outbox) is part of the contract: every adapter runs it.
  queuePartsSuite(name, factory, durable);
  // Held messages (scheduled delivery) and reads by id likewise.
  queueDueSuite(name, factory, durable);
}
