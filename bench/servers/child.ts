// Starts a bench server (a script in bench/servers/) in its own Node process with --expose-gc and
// an IPC channel: the load generator never shares the server's event loop. The child prints its
// port on stdout and exits when its stdin closes. BENCH_RELAY_FLAGS adds Node flags to the relay
// child only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it. A relay child runs with
// the Node flags the relay is deployed with (its start script's, `deployedRelayFlags`).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The Node flags of `apps/relay`'s start script in the checkout `root` (the Dockerfile and the
 * systemd unit set the same, apps/relay/test/deploy-files.test.ts): a bench measures the relay as
 * it is deployed, and an A/B of two checkouts each with its own flags (docs/decisions, 0732).
 */
export function deployedRelayFlags(root: string = REPO): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'apps/relay/package.json'), 'utf8')) as {
    scripts?: { start?: string };
  };
  const words = (manifest.scripts?.start ?? '').split(/\s+/);
  return words[0] === 'node' ? words.slice(1).filter((w) => w.startsWith('--')) : [];
}

export interface BenchChild {
  /** The first line the child printed, as a number (servers print their port). */
  readonly port: number;
  readonly process: ChildProcess;
  /** Asks the child over IPC (relay-server.ts: `memory`, `stats`). */
  ask(type: string): Promise<Record<string, number>>;
  /** Closes its stdin and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts `bench/servers/<script>`; resolves once it printed its first line (a port, or what the
 * script reports when ready). With `files`, the child runs with its open-files limit raised to
 * that many (through `ulimit -n`, which fails when the hard limit is lower); `env` adds variables;
 * `root` runs the script of another checkout of this repository (bench/relay-ab.ts).
 */
export async function startChild(
  script: string,
  args: readonly string[] = [],
  options: { files?: number; env?: NodeJS.ProcessEnv; root?: string } = {},
): Promise<BenchChild> {
  const extra =
    script === 'relay-server.ts' || script === 'cluster-node.ts'
      ? [...deployedRelayFlags(options.root), ...(process.env.BENCH_RELAY_FLAGS ?? '').split(/\s+/).filter(Boolean)]
      : [];
  const node = [
    process.execPath,
    '--expose-gc',
    ...extra,
    '--conditions=@wmp/source',
    '--import',
    'tsx',
    `bench/servers/${script}`,
    ...args,
  ];
  const [command, ...argv] =
    options.files === undefined ? node : ['/bin/sh', '-c', `ulimit -n ${options.files} && exec "$@"`, 'sh', ...node];
  const child = spawn(command!, argv, {
    cwd: options.root ?? REPO,
    stdio: ['pipe', 'pipe', 'inherit', 'ipc'],
    ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`bench child ${script} exited (${code})`)));
  });
  let next = 1;
  const waiting = new Map<number, (answer: Record<string, number>) => void>();
  child.on('message', (m: { id: number } & Record<string, number>) => {
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  });
  return {
    port,
    process: child,
    ask(type) {
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        child.send({ id, type });
      });
    },
    async close() {
      child.stdin!.end();
      await exited;
    },
  };
}
