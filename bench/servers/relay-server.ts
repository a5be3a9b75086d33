// The relay side of bench/relay-routing and bench/idle-connections, in its own process (as in any
// deployment): `createRelay` on the SQLite store (`sqlite <file>`: WAL, fsync after COMMIT, group
// commit, as the relay configures it) or the memory store (`memory`). Prints the port, answers
// the parent over IPC (`memory`: GC, then memoryUsage; `stats`: counters and process CPU; `loop`: event-loop
// delay and GC pauses since the last `loop`) and serves until stdin
// closes; then it closes the relay (queued writes commit) and exits.
// The parent passes the limits as JSON in argv[4] (and other settings in argv[5]) and starts it
// with --expose-gc.
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import {
  createRelay,
  MemoryRelayStores,
  type RelayConfig,
  type RelayLimits,
} from '../../packages/relay-server/src/node.js';
import { SqliteStore } from '../../packages/relay-server/src/sqlite.js';

const [kind, path, limitsJson, optionsJson] = process.argv.slice(2);
const limits = JSON.parse(limitsJson ?? '{}') as Partial<RelayLimits>;
/**
 * Other settings of the relay (argv[5], JSON): `limitLoopback` for the attack bench, `port` and
 * `federation` for the federation bench.
 */
const options = JSON.parse(optionsJson ?? '{}') as Pick<RelayConfig, 'limitLoopback' | 'port' | 'federation'>;
const relay = createRelay({
  limits,
  ...options,
  store: (limits) => (kind === 'sqlite' ? SqliteStore.open({ path: path!, ...limits }) : new MemoryRelayStores(limits)),
});

function cpuMicros(): number {
  const used = process.cpuUsage();
  return used.user + used.system;
}

type Ask = { readonly id: number; readonly type: 'memory' | 'stats' | 'loop' };

/** How long the event loop was late since the last `loop` ask (what a stalled relay shows). */
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

/** GC pauses since the last `loop` ask, minor (scavenges) and major (mark-compact) apart. */
const pauses = { minor: 0, minorMs: 0, major: 0, majorMs: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    const major = kind === constants.NODE_PERFORMANCE_GC_MAJOR || kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL;
    if (major) {
      pauses.major++;
      pauses.majorMs += entry.duration;
    } else {
      pauses.minor++;
      pauses.minorMs += entry.duration;
    }
    pauses.maxMs = Math.max(pauses.maxMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('start the relay child with --expose-gc');
  // Twice: the first pass can leave weakly held and finalizable objects for the second.
  gc();
  gc();
}

const answers: Record<Ask['type'], () => Record<string, number>> = {
  memory: () => {
    collect();
    const m = process.memoryUsage();
    return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, buffers: m.arrayBuffers };
  },
  loop: () => {
    const answer = {
      p99Ms: loopDelay.percentile(99) / 1e6,
      maxMs: loopDelay.max / 1e6,
      gcMinor: pauses.minor,
      gcMinorMs: pauses.minorMs,
      gcMajor: pauses.major,
      gcMajorMs: pauses.majorMs,
      gcMaxMs: pauses.maxMs,
    };
    loopDelay.reset();
    Object.assign(pauses, { minor: 0, minorMs: 0, major: 0, majorMs: 0, maxMs: 0 });
    return answer;
  },
  stats: () => ({
    // CPU time of the whole process so far (every thread), for CPU per message between two asks.
    cpuMicros: cpuMicros(),
    connections: relay.core.connections,
    registered: relay.core.presence.size,
    routed: relay.core.metrics.routed,
    deliveries: relay.core.metrics.deliveries,
    errors: [...relay.core.metrics.errors.values()].reduce((a, b) => a + b, 0),
    ...(relay.stores instanceof SqliteStore ? relay.stores.writeStats : {}),
  }),
};

process.on('message', (ask: Ask) => process.send?.({ id: ask.id, ...answers[ask.type]() }));

const { port } = await relay.listen();
process.stdout.write(`${port}\n`);
process.stdin.on('end', () => {
  void relay.close().then(() => process.exit(0));
});
process.stdin.resume();
