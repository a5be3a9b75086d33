import { afterEach, describe, expect, it } from 'vitest';
import type { PartitionedQueueCaps, QueueLimits, QueueMessageInput, QueueStore } from '../../index.js';
import { RelayQueueFullError, StoreInputError } from '../../index.js';
import { type Harness, Harnesses } from './harness.js';

type QueueFactory = (limits: Partial<QueueLimits>) => Promise<Harness<QueueStore>>;

const OUTBOX = 'relay:https://peer.example';
const HOUR = 3600_000;
const [ALICE, MALLORY, TRENT] = ['did:key:z6MkAlice', 'did:key:z6MkMallory', 'did:key:z6MkTrent'];
const [BOB, CAROL, DAVE] = ['did:key:z6MkBob', 'did:key:z6MkCarol', 'did:key:z6MkDave'];
const BIG: PartitionedQueueCaps = {
  maxQueued: 1_000_000,
  maxBytes: 1_000_000_000,
  maxQueuedPerSender: 1_000_000,
  maxBytesPerSender: 1_000_000_000,
};

let n = 0;
function msg(sender: string, id = `${sender}\nmsg-${++n}`): QueueMessageInput {
  return { id, sender, body: JSON.stringify({ jsonrpc: '2.0', method: 'wmp.message.deliver', params: { n } }) };
}

/**
 * The partitioned queue of `QueueStore.appendToPart` (a peer relay's outbox, one part per remote
 * recipient): each part within the per-recipient limits, the whole within its caps, atomically.
 * Part of `queueStoreSuite`: every adapter runs it.
 */
export function queuePartsSuite(name: string, factory: QueueFactory, durable: boolean): void {
  describe(`QueueStore parts: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (limits: Partial<QueueLimits> = {}) => (await harnesses.open(limits)).store;
    const later = (part: string, caps = BIG, bytes?: number) => ({
      expiresAt: Date.now() + HOUR,
      part,
      caps,
      ...(bytes === undefined ? {} : { bytes }),
    });
    const reasonOf = (p: Promise<unknown>) =>
      p.then(
        () => 'queued',
        (e: unknown) => (e instanceof RelayQueueFullError ? e.reason : String(e)),
      );

    it('holds each part to the limits of a recipient: flooding one leaves the others alone', async () => {
      const queue = await open({ maxQueued: 4, maxQueuedPerSender: 2 });
      for (let i = 0; i < 2; i++) await queue.appendToPart(OUTBOX, msg(MALLORY), later(BOB));
      expect(await reasonOf(queue.appendToPart(OUTBOX, msg(MALLORY), later(BOB)))).toBe('sender_share');
      for (let i = 0; i < 2; i++) await queue.appendToPart(OUTBOX, msg(TRENT), later(BOB));
      expect(await reasonOf(queue.appendToPart(OUTBOX, msg(ALICE), later(BOB)))).toBe('max_queued');
      // Bob's part is full; everyone else's traffic to the same peer is not.
      expect((await queue.appendToPart(OUTBOX, msg(ALICE), later(CAROL))).status).toBe('queued');
      expect((await queue.appendToPart(OUTBOX, msg(MALLORY), later(DAVE))).status).toBe('queued');
      expect(await queue.partStats(OUTBOX, BOB)).toMatchObject({ count: 4 });
      expect(await queue.partStats(OUTBOX, CAROL)).toMatchObject({ count: 1 });
      expect(await queue.partStats(OUTBOX, 'did:key:z6MkNobody')).toEqual({ count: 0, bytes: 0 });
      expect(await queue.stats(OUTBOX)).toMatchObject({ count: 6 });
    });

    it("holds a part's bytes, and a sender's share of them, as a recipient's", async () => {
      const queue = await open({ maxBytes: 1000, maxBytesPerSender: 600 });
      expect((await queue.appendToPart(OUTBOX, msg(ALICE), later(BOB, BIG, 600))).status).toBe('queued');
      expect(await reasonOf(queue.appendToPart(OUTBOX, msg(ALICE), later(BOB, BIG, 1)))).toBe('sender_share');
      expect((await queue.appendToPart(OUTBOX, msg(TRENT), later(BOB, BIG, 400))).status).toBe('queued');
      expect(await reasonOf(queue.appendToPart(OUTBOX, msg(MALLORY), later(BOB, BIG, 1)))).toBe('max_bytes');
      expect(await queue.partStats(OUTBOX, BOB)).toEqual({ count: 2, bytes: 1000 });
    });

    it("bounds the whole queue by its own caps, and each sender's totals across its parts", async () => {
      const queue = await open();
      const caps = { maxQueued: 5, maxBytes: 10_000, maxQueuedPerSender: 3, maxBytesPerSender: 10_000 };
      for (const part of [BOB, CAROL, DAVE]) await queue.appendToPart(OUTBOX, msg(MALLORY), later(part, caps));
      expect(await reasonOf(queue.appendToPart(OUTBOX, msg(MALLORY), later('did:key:z6MkE', caps)))).toBe(
        'queue_sender_share',
      );
      for (let i = 0; i < 2; i++) await queue.appendToPart(OUTBOX, msg(ALICE), later(BOB, caps));
      expect(await reasonOf(queue.appendToPart(OUTBOX, msg(TRENT), later(CAROL, caps)))).toBe('queue_count');
      const bytes = { ...caps, maxQueued: 100, maxBytes: 1000, maxBytesPerSender: 1000, maxQueuedPerSender: 100 };
      const other = 'relay:https://other.example';
      await queue.appendToPart(other, msg(ALICE), later(BOB, bytes, 900));
      expect(await reasonOf(queue.appendToPart(other, msg(TRENT), later(CAROL, bytes, 101)))).toBe('queue_bytes');
      // Another queue is another outbox: its caps are its own.
      expect(await queue.stats(other)).toEqual({ count: 1, bytes: 900 });
    });

    it('gives a part its room back on ack, ackThrough and expiry; a retry is `exists` even when full', async () => {
      const queue = await open({ maxQueued: 2, maxQueuedPerSender: 2 });
      const first = msg(ALICE);
      await queue.appendToPart(OUTBOX, first, later(BOB));
      await queue.appendToPart(OUTBOX, msg(ALICE), later(BOB));
      expect(await queue.appendToPart(OUTBOX, first, later(BOB))).toEqual({ status: 'exists', seq: 1 });
      expect(await reasonOf(queue.appendToPart(OUTBOX, msg(ALICE), later(BOB)))).toBe('max_queued');
      await queue.ack(OUTBOX, [first.id]);
      expect(await queue.partStats(OUTBOX, BOB)).toMatchObject({ count: 1 });
      const third = msg(ALICE);
      expect((await queue.appendToPart(OUTBOX, third, later(BOB))).status).toBe('queued');
      await queue.ackThrough(OUTBOX, third.id);
      expect(await queue.partStats(OUTBOX, BOB)).toEqual({ count: 0, bytes: 0 });
      await queue.appendToPart(OUTBOX, msg(ALICE), { ...later(BOB), expiresAt: Date.now() + 1 });
      expect(await queue.sweepExpired(Date.now() + 2, 10)).toHaveLength(1);
      expect(await queue.partStats(OUTBOX, BOB)).toEqual({ count: 0, bytes: 0 });
      for (let i = 0; i < 2; i++)
        expect((await queue.appendToPart(OUTBOX, msg(ALICE), later(BOB))).status).toBe('queued');
      expect(await queue.totals()).toMatchObject({ count: 2 });
    });

    it('reads the whole queue in seq order across its parts', async () => {
      const queue = await open();
      const sent = [msg(ALICE), msg(TRENT), msg(ALICE)];
      await queue.appendToPart(OUTBOX, sent[0]!, later(BOB));
      await queue.appendToPart(OUTBOX, sent[1]!, later(CAROL));
      await queue.appendToPart(OUTBOX, sent[2]!, later(DAVE));
      const page = await queue.after(OUTBOX, undefined, 10);
      expect(page.messages.map((m) => [m.seq, m.id])).toEqual(sent.map((m, i) => [i + 1, m.id]));
    });

    it('checks every cap atomically with the insert under concurrent appends', async () => {
      const queue = await open({ maxQueued: 5, maxQueuedPerSender: 5 });
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, () => queue.appendToPart(OUTBOX, msg(ALICE), later(BOB))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      expect(await queue.partStats(OUTBOX, BOB)).toMatchObject({ count: 5 });
      const caps = { ...BIG, maxQueued: 7 };
      const more = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => queue.appendToPart(OUTBOX, msg(TRENT), later(`did:key:z6MkP${i}`, caps))),
      );
      expect(more.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
      expect(await queue.stats(OUTBOX)).toMatchObject({ count: 7 });
    });

    it('refuses a missing part or caps that are not positive integers with StoreInputError', async () => {
      const queue = await open();
      await expect(queue.appendToPart(OUTBOX, msg(ALICE), later(''))).rejects.toBeInstanceOf(StoreInputError);
      await expect(queue.appendToPart(OUTBOX, msg(ALICE), later(BOB, { ...BIG, maxQueued: 0 }))).rejects.toBeInstanceOf(
        StoreInputError,
      );
      expect(await queue.totals()).toEqual({ count: 0, bytes: 0 });
    });

    if (durable)
      it('keeps the parts and their shares across a reopen', async () => {
        const h = await harnesses.open({ maxQueued: 3, maxQueuedPerSender: 2 });
        for (let i = 0; i < 2; i++) await h.store.appendToPart(OUTBOX, msg(MALLORY), later(BOB));
        await h.store.appendToPart(OUTBOX, msg(ALICE), later(CAROL));
        const again = (await harnesses.reopen(h)).store;
        expect(await again.partStats(OUTBOX, BOB)).toMatchObject({ count: 2 });
        expect(await reasonOf(again.appendToPart(OUTBOX, msg(MALLORY), later(BOB)))).toBe('sender_share');
        expect((await again.appendToPart(OUTBOX, msg(TRENT), later(BOB))).status).toBe('queued');
        expect(await reasonOf(again.appendToPart(OUTBOX, msg(ALICE), later(BOB)))).toBe('max_queued');
        await again.ack(OUTBOX, [(await again.after(OUTBOX, undefined, 1)).messages[0]!.id]);
        expect((await again.appendToPart(OUTBOX, msg(ALICE), later(BOB))).status).toBe('queued');
      });
  });
}
