// Memory per idle WebSocket session at 10k sessions: each client authenticated (signed
// challenge, its own key) and registered, then left idle. The relay runs in its own process on
// the SQLite store (the deployed default: WAL, fsync after each commit), the clients in two more
// (bench/servers/idle-clients.ts). The relay's memory is read over IPC after two full GCs, once
// 100 warm-up sessions are open and again after 10,000 more; the difference over 10,000 is the
// cost of one session. Baseline in the same run: plain `ws` connections on the bare forwarder.
// Target (bench/results/targets.md): <= 12 KiB per session, judged on RSS (everything the process
// holds for a session: heap, socket buffers, the SQLite page cache); heap alone is reported beside
// it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Benchmark, BenchReport, Figure } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';

const SESSIONS = 10_000;
const WARMUP_SESSIONS = 100;
/** Client processes the sessions are spread over (each opens SESSIONS / CLIENT_PROCESSES). */
const CLIENT_PROCESSES = 2;
const TARGET_KIB = 12;
/** Descriptors a process needs beyond its sockets (files, pipes, the event loop). */
const SPARE_FILES = 256;
const SETTLE_MS = 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kib = (bytes: number) => Math.round((bytes / 1024) * 100) / 100;

/** The hard open-files limit: children are started with their soft limit raised to what they need, up to it. */
function hardFileLimit(): number {
  const text = execFileSync('/bin/sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim();
  return text === 'unlimited' ? Number.POSITIVE_INFINITY : Number(text);
}

/** Opens `total` idle connections from CLIENT_PROCESSES processes; resolves with them and the time it took. */
async function openIdle(mode: 'wmp' | 'bare', url: string, total: number, processes: number) {
  const each = Math.ceil(total / processes);
  const start = performance.now();
  const clients = await Promise.all(
    Array.from({ length: processes }, () =>
      startChild('idle-clients.ts', [mode, url, String(each)], { files: each + SPARE_FILES }),
    ),
  );
  const opened = clients.reduce((n, c) => n + c.port, 0);
  return { clients, opened, seconds: (performance.now() - start) / 1000 };
}

type Memory = Record<string, number>;

function perSession(before: Memory, after: Memory, n: number) {
  return {
    rss: (after.rss! - before.rss!) / n,
    heap: (after.heapUsed! - before.heapUsed!) / n,
    native: (after.external! + after.buffers! - before.external! - before.buffers!) / n,
  };
}

const bench: Benchmark = {
  name: 'idle-connections',
  async run(): Promise<BenchReport> {
    const files = SESSIONS + WARMUP_SESSIONS + SPARE_FILES;
    const hard = hardFileLimit();
    if (hard < files) {
      throw new Error(`idle-connections needs ${files} open files per process; the hard limit (ulimit -Hn) is ${hard}`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-idle-'));
    const children: BenchChild[] = [];
    try {
      // Bare baseline: plain ws connections on the forwarder, same client processes.
      const forwarder = await startChild('ws-forwarder.ts', [], { files });
      children.push(forwarder);
      const bareUrl = `ws://127.0.0.1:${forwarder.port}`;
      children.push(...(await openIdle('bare', bareUrl, WARMUP_SESSIONS, 1)).clients);
      const bareBefore = await forwarder.ask('memory');
      const bare = await openIdle('bare', bareUrl, SESSIONS, CLIENT_PROCESSES);
      children.push(...bare.clients);
      await sleep(SETTLE_MS);
      const bareAfter = await forwarder.ask('memory');
      for (const c of children.splice(0)) await c.close();

      const limits = { maxConnections: SESSIONS + WARMUP_SESSIONS + 100 };
      const relay = await startChild('relay-server.ts', ['sqlite', join(dir, 'relay.db'), JSON.stringify(limits)], {
        files,
      });
      children.push(relay);
      const url = `ws://127.0.0.1:${relay.port}/wmp`;
      children.push(...(await openIdle('wmp', url, WARMUP_SESSIONS, 1)).clients);
      await sleep(SETTLE_MS);
      const before = await relay.ask('memory');
      const opened = await openIdle('wmp', url, SESSIONS, CLIENT_PROCESSES);
      children.push(...opened.clients);
      const stats = await relay.ask('stats');
      if (stats.registered !== SESSIONS + WARMUP_SESSIONS) {
        throw new Error(`${stats.registered} registered connections, expected ${SESSIONS + WARMUP_SESSIONS}`);
      }
      await sleep(SETTLE_MS);
      const after = await relay.ask('memory');

      const b = perSession(bareBefore, bareAfter, bare.opened);
      const s = perSession(before, after, opened.opened);
      const figures: Figure[] = [
        { name: `bare ws connection RSS, ${SESSIONS} idle`, value: kib(b.rss), unit: 'KiB' },
        { name: `bare ws connection heap, ${SESSIONS} idle`, value: kib(b.heap), unit: 'KiB' },
        {
          name: `relay session RSS (authenticated, registered), ${SESSIONS} idle`,
          value: kib(s.rss),
          unit: 'KiB',
          ratio: s.rss / b.rss,
          target: `<= ${TARGET_KIB} KiB`,
          met: s.rss <= TARGET_KIB * 1024,
        },
        { name: `relay session heap, ${SESSIONS} idle`, value: kib(s.heap), unit: 'KiB' },
        { name: `relay session external + array buffers, ${SESSIONS} idle`, value: kib(s.native), unit: 'KiB' },
        {
          name: 'relay sessions opened per second (connect, create, authenticate, register; incl. client start)',
          value: opened.opened / opened.seconds,
          unit: 'sessions/s',
        },
      ];
      return {
        name: 'idle-connections',
        baseline: { name: 'bare ws connection RSS', value: kib(b.rss), unit: 'KiB' },
        figures,
        conditions: {
          sessions: opened.opened,
          warmupSessions: WARMUP_SESSIONS,
          clientProcesses: CLIENT_PROCESSES,
          store: 'SQLite file, WAL, fsync after each commit',
          judgedOn: 'RSS after GC',
          relayRssBeforeMiB: Math.round(before.rss! / 2 ** 20),
          relayRssAfterMiB: Math.round(after.rss! / 2 ** 20),
          relayHeapBeforeMiB: Math.round(before.heapUsed! / 2 ** 20),
          relayHeapAfterMiB: Math.round(after.heapUsed! / 2 ** 20),
          bareOpenedPerSecond: Math.round(bare.opened / bare.seconds),
        },
      };
    } finally {
      for (const c of children.reverse()) await c.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
