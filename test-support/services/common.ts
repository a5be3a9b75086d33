// Shared by the throwaway PostgreSQL and Redis servers of the tests: typed errors, free ports,
// readiness polling and the clean-up that runs however the test process ends.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';

export type ServiceName = 'postgres' | 'redis';

/** A program the harness needs is not installed; `debianPackage` is what to `apt-get install`. */
export class ServiceBinaryMissingError extends Error {
  override readonly name = 'ServiceBinaryMissingError';
  constructor(
    readonly service: ServiceName,
    readonly binary: string,
    readonly debianPackage: string,
    detail = '',
  ) {
    super(
      `${service}: ${binary} is not installed${detail ? ` (${detail})` : ''}; ` +
        `install the Debian package ${debianPackage} (apt-get install -y ${debianPackage}; .ci/run does it)`,
    );
  }
}

/** A server did not start (or stop) as asked; `output` is the end of its log. */
export class ServiceStartError extends Error {
  override readonly name = 'ServiceStartError';
  constructor(
    readonly service: ServiceName,
    message: string,
    readonly output = '',
  ) {
    super(`${service}: ${message}${output ? `\n--- ${service} output (end) ---\n${output.slice(-4000)}` : ''}`);
  }
}

/**
 * The lowest port the kernel hands out by itself (bind to port 0, the local end of a connection):
 * Linux's `ip_local_port_range`, 32768 by default (and where that file is missing).
 */
function firstEphemeralPort(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const FIRST_PORT = 10_000;

function bindsOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port that was free a moment ago, for a server whose address must be known before it starts
 * (a federation peer's URL in the other relay's config, a database's port). It is drawn at random
 * below the kernel's ephemeral range: a port from `bind(0)` would be the very kind the kernel hands
 * the next client socket or the next `port: 0` server of a test running beside this one (two test
 * workers on one machine), which then takes it between this probe and the real bind.
 */
export async function freePort(): Promise<number> {
  const span = firstEphemeralPort() - FIRST_PORT;
  for (let attempt = 0; attempt < 64; attempt++) {
    const port = FIRST_PORT + Math.floor(Math.random() * span);
    if (await bindsOn(port)) return port;
  }
  throw new Error('freePort: no free port below the ephemeral range');
}

/** Polls `check` (every `intervalMs`, growing to 100 ms) until it returns a value, or throws after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let interval = options.intervalMs ?? 5;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${options.timeoutMs ?? 30_000} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, interval));
    interval = Math.min(interval * 2, 100);
  }
}

/**
 * States of a process that has finished: a zombie (orphans are not reaped on every machine) and
 * a dead one being released, which /proc shows briefly with its process group already cleared.
 */
const FINISHED_STATES = new Set(['Z', 'X', 'x']);

/** Whether a process exists and has not finished. Linux /proc. */
export function isProcessAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !FINISHED_STATES.has(stat.slice(stat.lastIndexOf(')') + 2)[0] ?? 'X');
  } catch {
    return false;
  }
}

/**
 * `root` and its live descendants, found by parent pid (a process tree may span process groups:
 * every postmaster child calls setsid()). Finished processes count as gone. Linux /proc.
 */
export function aliveTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid ...; comm may contain spaces and parentheses
    const [state = 'X', ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (FINISHED_STATES.has(state)) continue;
    const siblings = children.get(Number(ppid)) ?? [];
    siblings.push(Number(entry));
    children.set(Number(ppid), siblings);
  }
  const tree = isProcessAlive(root) ? [root] : [];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i] as number) ?? []));
  return tree;
}

/** Quotes one word for /bin/sh. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

// --- clean-up ---------------------------------------------------------------------------------
//
// Two layers, so a server never outlives the test process that started it:
// 1. process 'exit': synchronous kill + remove of every live service;
// 2. a watchdog per service: a detached `sh` whose stdin is a pipe from this process. When this
//    process ends in any way (even SIGKILL, where no handler runs) the pipe closes, `read` returns
//    and the watchdog runs the service's shell clean-up (kill the server, remove its directory).

interface Live {
  readonly cleanupSync: () => void;
  readonly watchdog: ChildProcess;
}

const live = new Set<Live>();
let hooked = false;

function cleanupAll(): void {
  for (const entry of live) {
    try {
      entry.cleanupSync();
    } catch {
      // best effort at exit
    }
  }
  live.clear();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // No signal handlers: they would change how the process dies; a signal's death is the watchdog's.
  process.on('exit', cleanupAll);
}

export interface CleanupHandle {
  /** Cleans up now (the watchdog does the shell part) and forgets the service. */
  release(): void;
}

/**
 * Registers a live service. `shellCleanup` is a /bin/sh snippet run by the watchdog when this
 * process dies; `cleanupSync` runs at a normal exit. Both must be safe to run twice.
 */
export function registerCleanup(shellCleanup: string, cleanupSync: () => void): CleanupHandle {
  hookExit();
  const watchdog = spawn('/bin/sh', ['-c', `read _ignored; ${shellCleanup}`], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => {}); // no /bin/sh: the exit hook still runs
  watchdog.stdin?.on('error', () => {});
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  const entry: Live = { cleanupSync, watchdog };
  live.add(entry);
  return {
    release() {
      if (!live.delete(entry)) return;
      cleanupSync();
      watchdog.stdin?.end(); // the watchdog runs its clean-up (now a no-op) and exits
    },
  };
}

/** rm -rf that never throws (at exit, a directory may already be gone). */
export function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // best effort
  }
}
