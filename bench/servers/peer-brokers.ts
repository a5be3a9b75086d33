// The brokers a user would run instead of a WMP relay, as throwaway servers for bench/peers (like
// PostgreSQL and Redis in the tests, test-support/services): Mosquitto 2 and NATS server with
// JetStream, from the Debian packages `mosquitto` and `nats-server`, each on a free 127.0.0.1 port
// with its store in a temporary directory that is removed with it. Ready when the port accepts a
// connection (both listen only once their store is open), never after a sleep. Each dies with the
// bench process (the same watchdog as the test services).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort, pollUntil, registerCleanup, removeDir, shellQuote } from '../../test-support/services/common.js';

export interface PeerBroker {
  /** `Mosquitto 2.0.11`, `NATS server 2.9.10 (JetStream)`. */
  readonly label: string;
  readonly port: number;
  /** The server process (for its CPU in /proc/<pid>/stat). */
  readonly pid: number;
  /** What it has made durable when it acknowledges a message, and what it has not. */
  readonly durability: string;
  close(): Promise<void>;
}

interface BrokerKind {
  /** The program's name; found on PATH or in the sbin directories, or named by `env`. */
  readonly binary: string;
  /** The variable that names the program's path instead (`BENCH_MOSQUITTO`, `BENCH_NATS_SERVER`). */
  readonly env: string;
  readonly debianPackage: string;
  readonly durability: string;
  label(binary: string): string;
  /** argv for a server on `port` with its files under `dir`. */
  args(port: number, dir: string): string[];
}

const version = (binary: string, flag: string) => {
  try {
    const out = execFileSync(binary, [flag], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return /(\d+\.\d+\.\d+)/.exec(out)?.[1] ?? 'unknown';
  } catch (e) {
    // mosquitto -h prints its version and exits 3.
    return /(\d+\.\d+\.\d+)/.exec(String((e as { stdout?: unknown }).stdout))?.[1] ?? 'unknown';
  }
};

const MOSQUITTO: BrokerKind = {
  binary: 'mosquitto',
  env: 'BENCH_MOSQUITTO',
  debianPackage: 'mosquitto',
  durability: 'persistent sessions in memory, written to disk on an autosave interval: no fsync before PUBACK',
  label: (binary) => `Mosquitto ${version(binary, '-h')}`,
  args(port, dir) {
    const config = join(dir, 'mosquitto.conf');
    writeFileSync(
      config,
      [
        `listener ${port} 127.0.0.1`,
        'allow_anonymous true',
        'persistence true',
        `persistence_location ${dir}/`,
        // No cap on QoS 1 messages in flight to a subscriber or queued for it: the load has 8 per pair.
        'max_inflight_messages 0',
        'max_queued_messages 100000',
        '',
      ].join('\n'),
    );
    return ['-c', config];
  },
};

const NATS: BrokerKind = {
  binary: 'nats-server',
  env: 'BENCH_NATS_SERVER',
  debianPackage: 'nats-server',
  durability:
    'JetStream file storage, written through the page cache and fsynced on an interval: no fsync before the PubAck',
  label: (binary) => `NATS server ${version(binary, '--version')} (JetStream)`,
  args: (port, dir) => ['-js', '-sd', join(dir, 'jetstream'), '-a', '127.0.0.1', '-p', String(port)],
};

export const BROKERS = { mosquitto: MOSQUITTO, nats: NATS } as const;
export type BrokerName = keyof typeof BROKERS;

/** The broker's program, or undefined when it is not installed. */
function programOf(kind: BrokerKind): string | undefined {
  const named = process.env[kind.env];
  if (named) return existsSync(named) ? named : undefined;
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  return dirs.map((dir) => join(dir, kind.binary)).find((path) => existsSync(path));
}

/** The Debian packages of `names` that are not installed (empty when every broker can start). */
export function missingBrokers(names: readonly BrokerName[]): string[] {
  return names.filter((n) => programOf(BROKERS[n]) === undefined).map((n) => BROKERS[n].debianPackage);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts a throwaway broker; resolves once its port accepts connections. */
export async function startBroker(name: BrokerName): Promise<PeerBroker> {
  const kind = BROKERS[name];
  const program = programOf(kind);
  if (program === undefined) throw new Error(`${name}: not installed (apt-get install -y ${kind.debianPackage})`);
  const dir = mkdtempSync(join(tmpdir(), `wmp-bench-${name}-`));
  // Mosquitto started as root drops to its own user, which must be able to write its store.
  if (name === 'mosquitto' && process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'mosquitto'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, -1);
  }
  const port = await freePort();
  const child: ChildProcess = spawn(program, kind.args(port, dir), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const cleanup = registerCleanup(`kill -9 ${child.pid} 2>/dev/null; rm -rf ${shellQuote(dir)}`, () => {
    child.kill('SIGKILL');
    removeDir(dir);
  });
  try {
    await pollUntil(`${name} on port ${port}`, async () => {
      if (gone) throw new Error(`${name} exited during start:\n${output}`);
      return (await accepts(port)) ? true : undefined;
    });
  } catch (e) {
    cleanup.release();
    throw e;
  }
  return {
    label: kind.label(program),
    port,
    pid: child.pid!,
    durability: kind.durability,
    async close() {
      child.kill('SIGKILL');
      await exited;
      cleanup.release();
    },
  };
}
