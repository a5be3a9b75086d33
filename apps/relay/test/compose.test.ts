// apps/relay/compose.yaml checked without a container engine (none runs here): the shape an
// operator relies on. A cluster of three nodes on one PostgreSQL and one Redis, each node with its
// own id and the shared key, the URL and key never written into the file, a proxy that forwards
// WebSocket upgrades, does not buffer SSE, and is the only proxy the relays believe.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../src/config.js';
import { REPO_ROOT } from './fixtures/relay-process.js';

const dir = join(REPO_ROOT, 'apps/relay');
const compose = parse(readFileSync(join(dir, 'compose.yaml'), 'utf8'), { merge: true }) as Record<string, any>;
const nginx = readFileSync(join(dir, 'deploy/nginx.conf'), 'utf8');
const relays = Object.entries(compose.services as Record<string, any>).filter(([name]) => name.startsWith('relay-'));

/** An environment as the container sees it, with ${VAR:?...} filled in. */
function environment(env: Record<string, string>): Record<string, string> {
  const vars: Record<string, string> = { WMP_PUBLIC_URL: 'https://relay.example.org', POSTGRES_PASSWORD: 'pw' };
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{(\w+):\?[^}]*\}/g, (_m, name) => vars[name]!)]),
  );
}

describe('apps/relay/compose.yaml', () => {
  it('runs three relay nodes on postgres and redis, behind a proxy', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'postgres',
      'proxy',
      'redis',
      'relay-1',
      'relay-2',
      'relay-3',
    ]);
    expect(compose.services.redis.command).toEqual(['redis-server', '--save', '', '--appendonly', 'no']);
    for (const [, relay] of relays) {
      expect(relay.depends_on).toMatchObject({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
      expect(relay.secrets).toEqual(['relay_key']);
    }
    expect(compose.secrets.relay_key.file).toBe('./deploy/relay.key');
    expect(readFileSync(join(dir, 'deploy/.gitignore'), 'utf8')).toContain('relay.key');
  });

  it('gives each node a configuration wmp-relay accepts as a cluster node, with its own id', () => {
    const ids = new Set<string>();
    for (const [, relay] of relays) {
      const env = environment(relay.environment);
      // The command's flags and the environment, through the relay's own parser.
      const parsed = parseConfig(relay.command.slice(2), env);
      expect(parsed.kind).toBe('config');
      if (parsed.kind !== 'config') continue;
      expect(parsed.config.cluster).toEqual({
        databaseUrl: 'postgres://wmp:pw@postgres:5432/wmp',
        redisUrl: 'redis://redis:6379',
      });
      expect(parsed.config.relayKey).toEqual({ file: '/run/secrets/relay_key' });
      expect(parsed.config.publicUrl).toBe('https://relay.example.org');
      expect(parsed.config.host).toBe('0.0.0.0');
      expect(parsed.config.trustedProxies).toEqual([compose.services.proxy.networks.default.ipv4_address]);
      ids.add(parsed.config.nodeId!);
    }
    expect(ids.size).toBe(3);
    // No secret written into the file: passwords come from the operator's environment.
    expect(JSON.stringify(compose)).not.toMatch(/POSTGRES_PASSWORD: [^$]/);
  });

  it('has nginx forward upgrades, not buffer event streams, and reach every node', () => {
    for (const [name] of relays) expect(nginx).toContain(`server ${name}:8080`);
    expect(nginx).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(nginx).toMatch(/proxy_set_header Connection \$connection_upgrade;/);
    expect(nginx).toMatch(/proxy_buffering off;/);
    expect(nginx).toMatch(/proxy_http_version 1\.1;/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(compose.services.proxy.volumes).toContain('./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro');
  });
});
