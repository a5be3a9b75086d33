// A three-node wmp-relay cluster for the cluster benches (bench/relay-cluster, bench/relay-ab
// --cluster): three processes of the app (bench/servers/cluster-node.ts, of this checkout or of
// `root`) on one database of the given PostgreSQL and one Redis, the relay key in WMP_RELAY_KEY,
// 50 senders on node 1 and their receivers on node 2 (every message crosses nodes), node 3 in the
// cluster and idle. CPU is read per part: the nodes, the PostgreSQL server, the Redis server.
import { randomBytes } from 'node:crypto';
import type { PostgresServer, RedisServer } from '../../test-support/services/index.js';
import { type BenchChild, startChild } from './child.js';
import { CpuMeter, withChildren } from './process-stats.js';
import { type Fleet, relayFleet } from './routing-load.js';
import type { WmpClient } from './wmp-client.js';

export interface ClusterArm {
  readonly databaseUrl: string;
  readonly nodes: readonly BenchChild[];
  readonly fleet: Fleet & { senders: WmpClient[]; receivers: WmpClient[] };
  /** CPU meters of the nodes, the PostgreSQL server and this arm's Redis, in that order. */
  readonly meters: readonly CpuMeter[];
  close(): Promise<void>;
}

/**
 * Starts the nodes (on database `database` of `postgres`, and `redis`) and connects the fleet.
 * Limits are far out of the way of a 50-sender load (the limiters still run).
 */
export async function startClusterArm(options: {
  readonly postgres: PostgresServer;
  readonly redis: RedisServer;
  readonly database: string;
  /** Another checkout of this repository (bench/relay-ab.ts); default this one. */
  readonly root?: string;
}): Promise<ClusterArm> {
  const { postgres, redis } = options;
  const databaseUrl = await postgres.createDatabase(options.database);
  const seed = randomBytes(32).toString('hex');
  const nodes: BenchChild[] = [];
  const node = async (id: string) => {
    const flags = ['--database-url', databaseUrl, '--redis-url', redis.url, '--node-id', id, '--port', '0'];
    flags.push('--rate', '1000000', '--rate-burst', '1000000', '--log-level', process.env.BENCH_LOG_LEVEL ?? 'silent');
    const child = await startChild('cluster-node.ts', flags, {
      env: { WMP_RELAY_KEY: seed },
      ...(options.root === undefined ? {} : { root: options.root }),
    });
    nodes.push(child);
    return child;
  };
  try {
    const [one, two] = [await node('bench-1'), await node('bench-2')];
    await node('bench-3');
    const fleet = await relayFleet(two.port, { senderPort: one.port });
    const nodePids = nodes.map((n) => n.process.pid!);
    const meters = [
      new CpuMeter(() => nodePids),
      new CpuMeter(() => (postgres.pid === undefined ? [] : withChildren(postgres.pid))),
      new CpuMeter(() => (redis.pid === undefined ? [] : [redis.pid])),
    ];
    return {
      databaseUrl,
      nodes,
      fleet,
      meters,
      async close() {
        fleet.close();
        for (const child of nodes) await child.close();
      },
    };
  } catch (error) {
    for (const child of nodes) await child.close();
    throw error;
  }
}
