import { describe, expect, it } from 'vitest';
import { type Coordination, MemoryCoordinationHub, memoryCoordination } from '../../src/index.js';
import { type CoordinationFactory, coordinationSuite } from '../../src/testing.js';

// Several nodes of one process on one hub: what Redis is to a cluster.
const memory: CoordinationFactory = async (limits) => {
  const hub = new MemoryCoordinationHub({ limits });
  const nodes: Coordination[] = [];
  return {
    async node(nodeId) {
      const node = hub.node(nodeId);
      nodes.push(node);
      return node;
    },
    crash: (node) => hub.crash(node),
    async close() {
      await Promise.all(nodes.map((node) => node.close()));
    },
  };
};

coordinationSuite('memory', memory);

describe('memoryCoordination (one process)', () => {
  it('is always healthy and never reconnects', async () => {
    const c = memoryCoordination();
    const seen: string[] = [];
    c.onHealth((h) => seen.push(h));
    const off = c.wakeUps.onReconnect(() => seen.push('reconnect'));
    expect(c.health()).toBe('ok');
    expect(c.nodeId).toBe('local');
    off();
    await c.close();
    expect(seen).toEqual([]);
  });

  it('wakes synchronously in the publishing call', async () => {
    const c = memoryCoordination({ nodeId: 'solo' });
    const seqs: (number | undefined)[] = [];
    await c.wakeUps.subscribe('did:key:z6MkBob', (seq) => seqs.push(seq));
    const published = c.wakeUps.publish('did:key:z6MkBob', 3);
    expect(seqs).toEqual([3]);
    expect(await published).toBe(1);
    await c.close();
    expect(await c.wakeUps.publish('did:key:z6MkBob', 4)).toBe(0);
  });

  it('shares rate limits and budgets by name within a node', async () => {
    const c = memoryCoordination();
    const one = c.rateLimiter('x', { perSecond: 0.001, burst: 1 });
    expect(await one.take('k')).toBe(true);
    expect(await c.rateLimiter('x', { perSecond: 0.001, burst: 1 }).take('k')).toBe(false);
    const budgets = c.keyPackageBudgets({ perTarget: 1 });
    expect(await budgets.reserve('a', 't')).toBeDefined();
    expect(await c.keyPackageBudgets({ perTarget: 1 }).reserve('b', 't')).toBeUndefined();
    expect(await c.keyPackageBudgets({ perTarget: 1, name: 'other' }).reserve('b', 't')).toBeDefined();
  });
});
