import { afterEach, describe, expect, it } from 'vitest';
import { Clusters, type CoordinationFactory, until } from './harness.js';

const SLOW = 0.001; // tokens per second: nothing refills during a test

/**
 * The adapter suite of `Coordination.rateLimiter` (token buckets): burst, refusal that spends
 * nothing, refill, and one bucket per key and name for every node, atomically.
 */
export function rateLimiterSuite(name: string, factory: CoordinationFactory): void {
  describe(`RateLimiter: ${name}`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('spends up to the burst, then refuses; a refused take spends nothing; keys are apart', async () => {
      const node = await (await clusters.open()).node('n');
      const limiter = node.rateLimiter('requests', { perSecond: SLOW, burst: 3 });
      expect(await limiter.take('a', 2)).toBe(true);
      expect(await limiter.take('a', 2)).toBe(false);
      expect(await limiter.take('a', 1)).toBe(true);
      expect(await limiter.take('a')).toBe(false);
      expect(await limiter.take('b', 3)).toBe(true);
      expect(await limiter.take('b')).toBe(false);
    });

    it('refuses a cost above the burst, always', async () => {
      const node = await (await clusters.open()).node('n');
      const limiter = node.rateLimiter('bytes', { perSecond: SLOW, burst: 2 });
      expect(await limiter.take('a', 3)).toBe(false);
      expect(await limiter.take('a', 2)).toBe(true);
    });

    it('refills at perSecond, not before', async () => {
      const node = await (await clusters.open()).node('n');
      const limiter = node.rateLimiter('refill', { perSecond: 5, burst: 1 }); // one token per 200 ms
      const start = Date.now();
      expect(await limiter.take('a')).toBe(true);
      expect(await limiter.take('a')).toBe(false);
      await until('a token to come back', async () => await limiter.take('a'));
      expect(Date.now() - start).toBeGreaterThanOrEqual(150);
    });

    it('one name is the same buckets on every node; another name is other buckets', async () => {
      const { a, b } = await clusters.two();
      const onA = a.rateLimiter('shared', { perSecond: SLOW, burst: 2 });
      const onB = b.rateLimiter('shared', { perSecond: SLOW, burst: 2 });
      expect(await onA.take('k')).toBe(true);
      expect(await onB.take('k')).toBe(true);
      expect(await onA.take('k')).toBe(false);
      expect(await onB.take('k')).toBe(false);
      expect(await b.rateLimiter('other', { perSecond: SLOW, burst: 1 }).take('k')).toBe(true);
    });

    it('is atomic under concurrent takes from two nodes', async () => {
      const { a, b } = await clusters.two();
      const limiters = [a, b].map((n) => n.rateLimiter('race', { perSecond: SLOW, burst: 5 }));
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => limiters[i % 2]!.take('k')));
      expect(results.filter(Boolean)).toHaveLength(5);
    });
  });
}

/**
 * The adapter suite of `Coordination.keyPackageBudgets`: a fixed window per target for all callers
 * and nodes, refunds into the same window only, one's own for free.
 */
export function keyPackageBudgetsSuite(name: string, factory: CoordinationFactory): void {
  describe(`KeyPackageBudgets: ${name}`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('allows perTarget fetches of a target by anyone, then refuses; other targets and one’s own are apart', async () => {
      const node = await (await clusters.open()).node('n');
      const budgets = node.keyPackageBudgets({ perTarget: 2 });
      expect(await budgets.reserve('c1', 'T')).toBeTypeOf('function');
      expect(await budgets.reserve('c2', 'T')).toBeTypeOf('function');
      expect(await budgets.reserve('c3', 'T')).toBeUndefined();
      expect(await budgets.reserve('c1', 'U')).toBeTypeOf('function');
      expect(await budgets.reserve('T', 'T')).toBeTypeOf('function');
    });

    it('a refund gives one fetch back, once', async () => {
      const node = await (await clusters.open()).node('n');
      const budgets = node.keyPackageBudgets({ perTarget: 2 });
      const first = await budgets.reserve('c1', 'T');
      expect(await budgets.reserve('c2', 'T')).toBeDefined();
      await first!();
      await first!();
      expect(await budgets.reserve('c3', 'T')).toBeDefined();
      expect(await budgets.reserve('c4', 'T')).toBeUndefined();
    });

    it('refuses everything with perTarget 0, but one’s own', async () => {
      const node = await (await clusters.open()).node('n');
      const budgets = node.keyPackageBudgets({ perTarget: 0 });
      expect(await budgets.reserve('c1', 'T')).toBeUndefined();
      expect(await budgets.reserve('T', 'T')).toBeDefined();
    });

    it('opens a new window windowMs after the first fetch; a refund of the old one does not credit it', async () => {
      const node = await (await clusters.open()).node('n');
      const budgets = node.keyPackageBudgets({ perTarget: 2, windowMs: 400 });
      const start = Date.now();
      const old = await budgets.reserve('c1', 'T');
      expect(await budgets.reserve('c2', 'T')).toBeDefined();
      expect(await budgets.reserve('c3', 'T')).toBeUndefined();
      await until('a new window', async () => (await budgets.reserve('c4', 'T')) !== undefined);
      expect(Date.now() - start).toBeGreaterThanOrEqual(300);
      expect(await budgets.reserve('c5', 'T')).toBeDefined();
      await old!(); // belongs to the window that ended
      expect(await budgets.reserve('c6', 'T')).toBeUndefined();
    });

    it('is one window for every node, atomic under concurrent reserves', async () => {
      const { a, b } = await clusters.two();
      const budgets = [a, b].map((n) => n.keyPackageBudgets({ perTarget: 5 }));
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => budgets[i % 2]!.reserve(`c${i}`, 'T')));
      expect(results.filter((r) => r !== undefined)).toHaveLength(5);
      // A refund on one node is a fetch for the other.
      await results.find((r) => r !== undefined)!();
      expect(await budgets[1]!.reserve('late', 'T')).toBeDefined();
      expect(await budgets[0]!.reserve('later', 'T')).toBeUndefined();
    });
  });
}
