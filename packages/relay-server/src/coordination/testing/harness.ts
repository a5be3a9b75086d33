import { vi } from 'vitest';
import type { Coordination, CoordinationLimits } from '../contracts/coordination.js';

/**
 * A coordination backend under test, as the shared suites see it: a fresh, empty backend (a Redis
 * key prefix of its own, a memory hub) on which the suite opens nodes, as a cluster would.
 */
export interface CoordinationCluster {
  /** A node on this backend; several nodes share everything. */
  node(nodeId: string): Promise<Coordination>;
  /** The node dies: nothing is withdrawn, nothing refreshed, its connections are gone. */
  crash(node: Coordination): Promise<void>;
  /** Closes every node still open and frees the backend. */
  close(): Promise<void>;
}

export type CoordinationFactory = (limits: CoordinationLimits) => Promise<CoordinationCluster>;

/** Tracks the clusters a test opened so `afterEach` closes them, whatever the test did. */
export class Clusters {
  readonly #open: CoordinationCluster[] = [];
  readonly #factory: CoordinationFactory;

  constructor(factory: CoordinationFactory) {
    this.#factory = factory;
  }

  async open(limits: CoordinationLimits = {}): Promise<CoordinationCluster> {
    const cluster = await this.#factory(limits);
    this.#open.push(cluster);
    return cluster;
  }

  /** A cluster with nodes `a` and `b`. */
  async two(
    limits: CoordinationLimits = {},
  ): Promise<{ a: Coordination; b: Coordination; cluster: CoordinationCluster }> {
    const cluster = await this.open(limits);
    const [a, b] = await Promise.all([cluster.node('node-a'), cluster.node('node-b')]);
    return { a, b, cluster };
  }

  async closeAll(): Promise<void> {
    for (const c of this.#open.splice(0)) await c.close();
  }
}

/**
 * Waits until `check` holds, through `vi.waitFor` as the repository's own tests wait; fails with
 * `what` after `timeoutMs`. Tests wait on state this way, never on a fixed sleep.
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 5 },
  );
}

/** Checks `check` again and again for `ms` (a property that must hold over time, e.g. beyond a TTL). */
export async function holdsFor(what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  do {
    if (!(await check())) throw new Error(`no longer true: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  } while (Date.now() < end);
}
