import { afterEach, describe, expect, it } from 'vitest';
import { MAX_WAKE_BODY_CHARS, MAX_WAKE_NOTE_CHARS, type WakeHandler } from '../contracts/wake-ups.js';
import { Clusters, type CoordinationFactory, holdsFor, until } from './harness.js';

let n = 0;
const someone = () => `did:key:z6Mk${++n}${Math.random().toString(36).slice(2)}`;

/** Records what a handler was woken with. */
function recorder(): { seqs: (number | undefined)[]; handler: WakeHandler } {
  const seqs: (number | undefined)[] = [];
  return { seqs, handler: (seq) => seqs.push(seq) };
}

/**
 * The adapter suite of `Coordination.presence`: an entry announced on one node is seen from the
 * others, stays while its node lives (past its TTL), goes on withdraw or close at once, and
 * expires after its node dies.
 */
export function presenceDirectorySuite(name: string, factory: CoordinationFactory): void {
  describe(`PresenceDirectory: ${name}`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('shows every node that announced an identity, sorted, until each withdraws', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      expect(await b.presence.nodesOf(who)).toEqual([]);
      await a.presence.announce(who, a.nodeId, 30_000);
      expect(await b.presence.nodesOf(who)).toEqual([a.nodeId]);
      await b.presence.announce(who, b.nodeId, 30_000);
      await a.presence.announce(who, a.nodeId, 30_000); // idempotent
      expect(await a.presence.nodesOf(who)).toEqual([a.nodeId, b.nodeId]);
      await a.presence.withdraw(who, a.nodeId);
      expect(await b.presence.nodesOf(who)).toEqual([b.nodeId]);
      await b.presence.withdraw(who, b.nodeId);
      expect(await a.presence.nodesOf(who)).toEqual([]);
      await b.presence.withdraw(who, b.nodeId); // nothing left: no error
    });

    it('keeps an entry past its TTL while its node lives', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      await a.presence.announce(who, a.nodeId, 600);
      await holdsFor('the entry is there', 1500, async () => (await b.presence.nodesOf(who)).includes(a.nodeId));
    });

    it('lets the entries of a node that died expire; the other nodes’ stay', async () => {
      const { a, b, cluster } = await clusters.two();
      const who = someone();
      await a.presence.announce(who, a.nodeId, 600);
      await b.presence.announce(who, b.nodeId, 30_000);
      expect(await b.presence.nodesOf(who)).toEqual([a.nodeId, b.nodeId]);
      await cluster.crash(a);
      await until('the dead node’s entry to expire', async () => (await b.presence.nodesOf(who)).length === 1);
      expect(await b.presence.nodesOf(who)).toEqual([b.nodeId]);
    });

    it('refuses a presence TTL below 3 ms', async () => {
      const node = await (await clusters.open()).node('n');
      await expect(node.presence.announce(someone(), node.nodeId, 0)).rejects.toBeInstanceOf(RangeError);
    });

    it('withdraws a node’s entries when it closes cleanly', async () => {
      const { a, b } = await clusters.two();
      const [x, y] = [someone(), someone()];
      await a.presence.announce(x, a.nodeId, 30_000);
      await a.presence.announce(y, a.nodeId, 30_000);
      await a.close();
      expect(await b.presence.nodesOf(x)).toEqual([]);
      expect(await b.presence.nodesOf(y)).toEqual([]);
    });
  });
}

/**
 * The adapter suite of `Coordination.wakeUps` and `boxWakeUps`: a publish reaches every handler of
 * the recipient on every node (this one at once), counts the nodes, stops at unsubscribe, keeps
 * recipients and the two kinds apart, and is bounded per recipient and in total.
 */
export function wakeUpsSuite(name: string, factory: CoordinationFactory): void {
  describe(`WakeUps: ${name}`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('carries a publish on one node to the subscribers on the others, with its seq', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      const onB = recorder();
      expect(await b.wakeUps.subscribe(who, onB.handler)).toBeTypeOf('function');
      expect(await a.wakeUps.publish(who, 7)).toBe(1);
      await until('the wake-up on b', () => onB.seqs.length === 1);
      expect(onB.seqs).toEqual([7]);
      await a.wakeUps.publish(who);
      await until('the second wake-up on b', () => onB.seqs.length === 2);
      expect(onB.seqs).toEqual([7, undefined]);
    });

    it('calls the publishing node’s own handlers before publish resolves, once', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      const onA = recorder();
      const onB = recorder();
      await a.wakeUps.subscribe(who, onA.handler);
      await b.wakeUps.subscribe(who, onB.handler);
      expect(await a.wakeUps.publish(who, 1)).toBe(2);
      expect(onA.seqs).toEqual([1]);
      await until('b', () => onB.seqs.length === 1);
      // A later wake-up reaches b after the first; a still has only its own, once.
      const sentinel = recorder();
      const other = someone();
      await b.wakeUps.subscribe(other, sentinel.handler);
      await a.wakeUps.publish(other, 2);
      await until('the sentinel on b', () => sentinel.seqs.length === 1);
      expect(onA.seqs).toEqual([1]);
    });

    it('carries the committed body to the other nodes with its seq, never to the publisher, and none over the bound', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      const onA: [number | undefined, string | undefined][] = [];
      const onB: [number | undefined, string | undefined][] = [];
      await a.wakeUps.subscribe(who, (seq, _note, body) => onA.push([seq, body]));
      await b.wakeUps.subscribe(who, (seq, _note, body) => onB.push([seq, body]));
      const longest = `{"text":"${'x'.repeat(MAX_WAKE_BODY_CHARS - 11)}"}`;
      await a.wakeUps.publish(who, 1, '{"text":"with: colons"}');
      await a.wakeUps.publish(who, 2, longest);
      await a.wakeUps.publish(who, 3, `${longest} `);
      await a.wakeUps.publish(who, undefined, '{"no":"seq"}');
      await until('four wake-ups on b', () => onB.length === 4);
      expect(onB).toEqual([
        [1, '{"text":"with: colons"}'],
        [2, longest],
        [3, undefined],
        [undefined, undefined],
      ]);
      expect(onA).toEqual([
        [1, undefined],
        [2, undefined],
        [3, undefined],
        [undefined, undefined],
      ]);
    });

    it('says whether a node’s handlers of a recipient hear the others', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      expect(b.wakeUps.listening(who)).toBe(false);
      const off = await b.wakeUps.subscribe(who, () => {});
      expect(b.wakeUps.listening(who)).toBe(true);
      expect(a.wakeUps.listening(who)).toBe(false);
      off!();
      await until('b to stop listening', () => !b.wakeUps.listening(who));
    });

    it('broadcasts a note on a topic to every other node listening to it', async () => {
      const { a, b } = await clusters.two();
      const [onA, onB] = [recorder(), recorder()];
      const notes: (string | undefined)[] = [];
      await a.broadcast.subscribe('topic', onA.handler);
      await b.broadcast.subscribe('topic', (_seq, note) => notes.push(note));
      await b.broadcast.subscribe('other', onB.handler);
      expect(await a.broadcast.notify('topic', 'changed')).toBe(1);
      await until('the note on b', () => notes.length === 1);
      expect(notes).toEqual(['changed']);
      expect(onA.seqs).toEqual([]);
      expect(onB.seqs).toEqual([]);
    });

    it('counts no node when nobody listens', async () => {
      const { a } = await clusters.two();
      expect(await a.wakeUps.publish(someone(), 1)).toBe(0);
    });

    it('hands a note to the other nodes’ handlers only, counting them, never as a wake-up', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      const onA: [number | undefined, string | undefined][] = [];
      const onB: [number | undefined, string | undefined][] = [];
      await a.wakeUps.subscribe(who, (seq, note) => onA.push([seq, note]));
      await b.wakeUps.subscribe(who, (seq, note) => onB.push([seq, note]));
      expect(await a.wakeUps.notify(who, '{"status":"delivered"}')).toBe(1);
      await until('the note on b', () => onB.length === 1);
      expect(onB).toEqual([[undefined, '{"status":"delivered"}']]);
      // A wake-up after it reaches b after the note: a never had its own note.
      await a.wakeUps.publish(who, 3);
      await until('the wake-up on b', () => onB.length === 2);
      expect(onB[1]).toEqual([3, undefined]);
      expect(onA).toEqual([[3, undefined]]);
    });

    it('counts no node for a note nobody else listens to, or one too long to carry', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      const onA = recorder();
      await a.wakeUps.subscribe(who, onA.handler);
      expect(await a.wakeUps.notify(who, 'x')).toBe(0);
      expect(await a.wakeUps.notify(someone(), 'x')).toBe(0);
      const onB = recorder();
      await b.wakeUps.subscribe(who, onB.handler);
      expect(await a.wakeUps.notify(who, 'x'.repeat(MAX_WAKE_NOTE_CHARS + 1))).toBe(0);
      expect(await a.wakeUps.notify(who, 'x'.repeat(MAX_WAKE_NOTE_CHARS))).toBe(1);
      await until('the longest note on b', () => onB.seqs.length === 1);
      expect(onA.seqs).toEqual([]);
    });

    it('wakes every handler of a node; unsubscribing one keeps the others; the last one unsubscribes the node', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      const [h1, h2] = [recorder(), recorder()];
      const off1 = await b.wakeUps.subscribe(who, h1.handler);
      const off2 = await b.wakeUps.subscribe(who, h2.handler);
      expect(await a.wakeUps.publish(who, 1)).toBe(1); // one node, two handlers
      await until('both handlers', () => h1.seqs.length === 1 && h2.seqs.length === 1);
      off1!();
      off1!(); // idempotent
      await a.wakeUps.publish(who, 2);
      await until('the remaining handler', () => h2.seqs.length === 2);
      expect(h1.seqs).toEqual([1]);
      off2!();
      await until('b to unsubscribe', async () => (await a.wakeUps.publish(who, 3)) === 0);
      expect(h2.seqs).toEqual([1, 2]);
    });

    it('keeps recipients, and relay and box wake-ups, apart', async () => {
      const { a, b } = await clusters.two();
      const [x, y] = [someone(), someone()];
      const [onX, onY, boxX] = [recorder(), recorder(), recorder()];
      await b.wakeUps.subscribe(x, onX.handler);
      await b.wakeUps.subscribe(y, onY.handler);
      await b.boxWakeUps.subscribe(x, boxX.handler);
      await a.wakeUps.publish(y, 1);
      await a.boxWakeUps.publish(x, 2);
      await a.wakeUps.publish(x, 3);
      await until('x', () => onX.seqs.length === 1);
      expect(onX.seqs).toEqual([3]);
      expect(onY.seqs).toEqual([1]);
      expect(boxX.seqs).toEqual([2]);
    });

    it('refuses handlers beyond the bounds (nothing registered), and has room again after an unsubscribe', async () => {
      const node = await (await clusters.open({ wakeUps: { maxPerKey: 2, max: 3 } })).node('n');
      const [x, y] = [someone(), someone()];
      const offs = [await node.wakeUps.subscribe(x, () => {}), await node.wakeUps.subscribe(x, () => {})];
      expect(offs.every((off) => typeof off === 'function')).toBe(true);
      expect(await node.wakeUps.subscribe(x, () => {})).toBeUndefined();
      expect(await node.wakeUps.subscribe(y, () => {})).toBeTypeOf('function');
      expect(await node.wakeUps.subscribe(someone(), () => {})).toBeUndefined();
      offs[0]!();
      expect(await node.wakeUps.subscribe(x, () => {})).toBeTypeOf('function');
    });

    it('bounds box wake-ups by their own limits', async () => {
      const limits = { wakeUps: { maxPerKey: 1, max: 10 }, boxWakeUps: { maxPerKey: 2, max: 10 } };
      const node = await (await clusters.open(limits)).node('n');
      const who = someone();
      expect(await node.wakeUps.subscribe(who, () => {})).toBeTypeOf('function');
      expect(await node.wakeUps.subscribe(who, () => {})).toBeUndefined();
      expect(await node.boxWakeUps.subscribe(who, () => {})).toBeTypeOf('function');
      expect(await node.boxWakeUps.subscribe(who, () => {})).toBeTypeOf('function');
      expect(await node.boxWakeUps.subscribe(who, () => {})).toBeUndefined();
    });

    it('a handler that throws does not keep the others from their wake-up', async () => {
      const { a, b } = await clusters.two();
      const who = someone();
      const after = recorder();
      await b.wakeUps.subscribe(who, () => {
        throw new Error('handler bug');
      });
      await b.wakeUps.subscribe(who, after.handler);
      await a.wakeUps.publish(who, 5);
      await until('the second handler', () => after.seqs.length === 1);
      expect(await a.wakeUps.publish(who, 6)).toBe(1);
      await until('the second handler again', () => after.seqs.length === 2);
    });

    it('stops counting a node that died', async () => {
      const { a, b, cluster } = await clusters.two();
      const who = someone();
      await b.wakeUps.subscribe(who, () => {});
      expect(await a.wakeUps.publish(who)).toBe(1);
      await cluster.crash(b);
      await until('the dead node’s subscription to go', async () => (await a.wakeUps.publish(who)) === 0);
    });
  });
}
