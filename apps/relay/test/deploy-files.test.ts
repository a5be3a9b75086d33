// The files an operator installs, read by the relay's own option parser: the --config file (TOML
// and JSON), the sample environment file, the systemd unit, and the container's health check
// against a relay that serves TLS itself.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deployedRelayFlags } from '../../../bench/servers/child.js';
import { relayServerCertificate } from '../../../packages/relay-server/test/fixtures/tls-clients.js';
import { makePki } from '../../../packages/session/test/pki.js';
import { type AppConfig, type ParseResult, parseConfig, parseConfigFile } from '../src/config.js';
import { envOf, OPTIONS } from '../src/config-options.js';
import { REPO_ROOT, startRelayProcess } from './fixtures/relay-process.js';

const deploy = (name: string) => join(REPO_ROOT, 'apps/relay/deploy', name);
const dir = mkdtempSync(join(tmpdir(), 'wmp-deploy-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configOf(result: ParseResult): AppConfig {
  if (result.kind !== 'config') throw new Error(`expected a config, got ${JSON.stringify(result)}`);
  return result.config;
}
const reader = (files: Record<string, string>) => ({
  readFile: (path: string) => {
    if (path in files) return files[path]!;
    return readFileSync(path, 'utf8');
  },
});

/** The settings of a file as the flags that say the same. */
function asFlags(settings: Record<string, unknown>): string[] {
  return Object.entries(settings).flatMap(([key, value]) => {
    if (value === true) return [`--${key}`];
    if (Array.isArray(value)) return value.flatMap((v) => [`--${key}`, String(v)]);
    return [`--${key}`, String(value)];
  });
}

/** KEY=value lines of an environment file (comments and blank lines left out). */
function envFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

describe('--config FILE', () => {
  const toml = deploy('wmp-relay.toml');

  it('the sample TOML file says what the same flags say', () => {
    const settings = parseConfigFile(readFileSync(toml, 'utf8'), toml);
    expect(settings).toMatchObject({
      'data-dir': '/var/lib/wmp-relay',
      port: 8443,
      peer: ['https://relay-b.example.org'],
    });
    const fromFile = configOf(parseConfig(['--config', toml], {}, reader({})));
    expect(fromFile).toEqual(configOf(parseConfig(asFlags(settings as Record<string, unknown>), {})));
    expect(fromFile.limits.maxMessageBytes).toBe(1024 * 1024);
  });

  it('takes JSON with the same keys, and WMP_CONFIG names the file too', () => {
    const json = join(dir, 'relay.json');
    const settings = {
      'data-dir': '/srv/wmp',
      port: 9443,
      'relay-only': true,
      route: ['did:web:corp.example*=https://b.example'],
    };
    writeFileSync(json, JSON.stringify(settings));
    const config = configOf(parseConfig([], { WMP_CONFIG: json }, reader({})));
    expect(config).toEqual(configOf(parseConfig(asFlags(settings), {})));
    expect(config.directory).toBe(false);
  });

  it('a flag wins over a variable, a variable over the file', () => {
    const files = reader({ '/etc/r.toml': 'port = 8443\nhost = "0.0.0.0"\n' });
    expect(configOf(parseConfig(['--config', '/etc/r.toml'], {}, files)).port).toBe(8443);
    expect(configOf(parseConfig(['--config', '/etc/r.toml'], { WMP_PORT: '9000' }, files)).port).toBe(9000);
    expect(configOf(parseConfig(['--config', '/etc/r.toml', '--port', '9100'], { WMP_PORT: '9000' }, files)).port).toBe(
      9100,
    );
    expect(configOf(parseConfig(['--config', '/etc/r.toml'], { WMP_PORT: '' }, files)).port).toBe(8443);
  });

  it('refuses a bad file naming the file, the line or the key', () => {
    const error = (text: string, name = '/etc/r.toml') => {
      const result = parseConfig(['--config', name], {}, reader({ [name]: text }));
      return result.kind === 'error' ? result.message : `no error: ${JSON.stringify(result)}`;
    };
    expect(error('max-queued = "many"\n')).toBe('--config /etc/r.toml: max-queued: "many" is not an integer >= 0');
    expect(error('bogus = 1\n')).toBe('--config /etc/r.toml: bogus: not a setting (see wmp-relay --help)');
    expect(error('port = 1\n[relay]\nport = 2\n')).toBe(
      '--config /etc/r.toml:2: tables are not settings: keys are flags without their dashes, at the top',
    );
    expect(error('ephemeral = "yes"\n')).toBe('--config /etc/r.toml: ephemeral: true or false');
    expect(error('port = 1\nport = 2\n')).toBe('--config /etc/r.toml:2: port is set twice');
    expect(error('data-dir = "unterminated\n')).toBe('--config /etc/r.toml:1: a string without its closing quote');
    expect(error('[1, 2]', '/etc/r.json')).toBe('--config /etc/r.json: not a JSON object');
    expect(error('config = "/other.toml"\n')).toBe(
      '--config /etc/r.toml: config: not a setting (see wmp-relay --help)',
    );
    const missing = parseConfig(['--config', join(dir, 'none.toml')], {}, reader({}));
    expect(missing).toEqual({ kind: 'error', message: `--config ${join(dir, 'none.toml')}: cannot read it (ENOENT)` });
  });

  it('reads TOML strings, comments, underscores in integers and lists over lines', () => {
    const text = [
      '# a comment',
      "public-url = 'https://relay.example.org' # literal string",
      'node-id = "relay-\\u0031"',
      'max-queued = 1_000',
      'peer = [',
      '  "https://a.example", # first',
      '  "https://b.example",',
      ']',
    ].join('\n');
    expect(parseConfigFile(text, 'r.toml')).toEqual({
      'public-url': 'https://relay.example.org',
      'node-id': 'relay-1',
      'max-queued': 1000,
      peer: ['https://a.example', 'https://b.example'],
    });
  });
});

describe('the sample environment file (apps/relay/deploy/wmp-relay.env)', () => {
  const text = readFileSync(deploy('wmp-relay.env'), 'utf8');

  it('lists every variable of wmp-relay --help, and its uncommented lines are a valid setting', () => {
    const named = new Set([...text.matchAll(/^#?(WMP_[A-Z0-9_]+)=/gm)].map((m) => m[1]));
    for (const spec of OPTIONS) {
      const variable = envOf(spec);
      if (variable !== undefined) expect(named, variable).toContain(variable);
    }
    expect(named).toContain('WMP_BOX_MODE');
    const config = configOf(parseConfig([], envFile(text)));
    expect(config).toMatchObject({ dataDir: '/var/lib/wmp-relay', publicUrl: 'https://relay.example.org' });
  });

  it('every commented default is a value the relay takes, and changes nothing', () => {
    const all = envFile(text.replace(/^#(WMP_[A-Z0-9_]+=.+)$/gm, '$1'));
    const defaults = configOf(parseConfig([], envFile(text)));
    const uncommented = configOf(parseConfig([], all));
    // The same settings, but for the limits, timings and did:web caps now set explicitly (to their defaults).
    const loose = (c: AppConfig) => ({
      ...c,
      limits: {},
      timings: {},
      box: {},
      auth: { ...c.auth, didWebMaxBytes: undefined, didWebTimeoutMs: undefined },
    });
    expect(loose(uncommented)).toEqual(loose(defaults));
  });
});

describe('the systemd unit (apps/relay/deploy/wmp-relay.service)', () => {
  it('starts wmp-relay with the sample config and environment on its state directory', () => {
    const unit = readFileSync(deploy('wmp-relay.service'), 'utf8');
    const value = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1];
    const [binary, ...args] = value('ExecStart')!.split(' ');
    expect(binary).toBe('/usr/local/bin/wmp-relay');
    const envPath = value('EnvironmentFile')!.replace(/^-/, '');
    const files = reader({ '/etc/wmp-relay/wmp-relay.toml': readFileSync(deploy('wmp-relay.toml'), 'utf8') });
    const env = envFile(readFileSync(deploy('wmp-relay.env'), 'utf8'));
    expect(envPath).toBe('/etc/wmp-relay/wmp-relay.env');
    const config = configOf(parseConfig(args, env, files));
    expect(config.dataDir).toBe(`/var/lib/${value('StateDirectory')}`);
    expect(value('ReadWritePaths')).toBe(config.dataDir);
    expect(value('StateDirectoryMode')).toBe('0700');
    // SIGTERM is the graceful stop; systemd waits longer than the relay's own 8 s.
    expect(value('KillSignal')).toBe('SIGTERM');
    expect(Number(value('TimeoutStopSec'))).toBeGreaterThan(8);
    expect(value('RestartPreventExitStatus')).toBe('2');
  });
});

describe("the relay's Node flags (decision 0732)", () => {
  const startFlags = () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/relay/package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    const [node, ...words] = pkg.scripts.start.split(' ');
    expect(node).toBe('node');
    return words.filter((w) => w.startsWith('--'));
  };

  it('are the same in the start script, ./dev start, the Dockerfile, the systemd unit and the benches', () => {
    const flags = startFlags();
    expect(flags.length).toBeGreaterThan(0);
    const dockerfile = readFileSync(join(REPO_ROOT, 'apps/relay/Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(/^ {4}NODE_OPTIONS=(\S+)/m.exec(runtime)?.[1]).toBe(flags.join(' '));
    const unit = readFileSync(deploy('wmp-relay.service'), 'utf8');
    expect(/^Environment=NODE_OPTIONS=(.*)$/m.exec(unit)?.[1]).toBe(flags.join(' '));
    // The unit's environment file comes after it, so an operator's NODE_OPTIONS there wins.
    expect(unit.indexOf('Environment=NODE_OPTIONS')).toBeLessThan(unit.indexOf('EnvironmentFile='));
    const dev = readFileSync(join(REPO_ROOT, 'dev'), 'utf8');
    expect(dev).toContain(`exec node ${flags.join(' ')} apps/relay/bin/wmp-relay.js`);
    expect(deployedRelayFlags()).toEqual(flags);
  });

  it('are flags this Node takes', async () => {
    const code = await new Promise<number>((resolve) =>
      execFile(process.execPath, [...startFlags(), '-e', '0'], (error) =>
        resolve(error ? ((error as { code?: number }).code ?? 1) : 0),
      ),
    );
    expect(code).toBe(0);
  });
});

describe("the container's health check (bin/healthcheck.js)", () => {
  const health = (env: NodeJS.ProcessEnv) =>
    new Promise<number>((resolve) => {
      execFile(
        process.execPath,
        ['apps/relay/bin/healthcheck.js'],
        { cwd: REPO_ROOT, env: { PATH: process.env.PATH, ...env } },
        (error) => resolve(error ? ((error as { code?: number }).code ?? 1) : 0),
      );
    });

  it('is what the Dockerfile runs, and ships in the package', () => {
    const dockerfile = readFileSync(join(REPO_ROOT, 'apps/relay/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ {2}CMD \["node", "bin\/healthcheck\.js"\]$/m);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/relay/package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('bin');
  });

  it('passes on a relay that serves TLS itself, where a plain http check fails', async () => {
    const tls = await relayServerCertificate(await makePki());
    writeFileSync(join(dir, 'chain.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    const relay = await startRelayProcess(
      ['--ephemeral', '--port', '0', '--tls-cert', join(dir, 'chain.pem'), '--tls-key', join(dir, 'key.pem')],
      { timeoutMs: 60_000 },
    );
    const port = new URL(relay.url).port;
    try {
      expect(await health({ WMP_PORT: port, WMP_TLS_CERT: join(dir, 'chain.pem') })).toBe(0);
      expect(await health({ WMP_PORT: port })).toBe(0); // TLS from a config file: found by trying
      // The check the Dockerfile had: plain http to a TLS port.
      const old = await new Promise<number>((resolve) =>
        execFile(
          process.execPath,
          ['-e', `fetch('http://127.0.0.1:${port}/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`],
          (error) => resolve(error ? 1 : 0),
        ),
      );
      expect(old).toBe(1);
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
    expect(await health({ WMP_PORT: port })).toBe(1);
  }, 90_000);

  it('passes on a plain relay', async () => {
    const relay = await startRelayProcess(['--ephemeral', '--port', '0'], { timeoutMs: 60_000 });
    try {
      expect(await health({ WMP_PORT: new URL(relay.url).port })).toBe(0);
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
  }, 90_000);
});
