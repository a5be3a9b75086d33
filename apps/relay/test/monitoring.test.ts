// The monitoring an operator installs names the metrics a relay really serves: the Grafana
// dashboard and the Prometheus alert rules (apps/relay/deploy/) use only names /metrics has, and
// docs/operations.md lists exactly the names /metrics has, scraped from a real relay process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../../../test-support/services/index.js';
import { REPO_ROOT, type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';

let relay: RelayProcess;
let served: Set<string>;

beforeAll(async () => {
  // A peer that is configured (its metrics appear) and down.
  relay = await startRelayProcess(['--ephemeral', '--port', '0', '--peer', `http://127.0.0.1:${await freePort()}`], {
    timeoutMs: 60_000,
  });
  const text = await (await fetch(`${relay.url}/metrics`)).text();
  served = new Set([...text.matchAll(/^# TYPE (\S+) (?:gauge|counter)$/gm)].map((m) => m[1]!));
}, 90_000);

afterAll(async () => {
  relay?.child.kill('SIGTERM');
  await relay?.exited;
});

/** The relay's metric names an expression or a text mentions (`up` and the like are Prometheus's own). */
function namesIn(text: string): Set<string> {
  return new Set([...text.matchAll(/\b((?:wmp_relay|process)_[a-z0-9_]+)\b/g)].map((m) => m[1]!));
}

describe('monitoring', () => {
  it('the relay serves its own, the federation, the box and the build metrics', () => {
    for (const name of [
      'wmp_relay_node_info',
      'wmp_relay_peer_connected',
      'wmp_relay_box_events',
      'wmp_relay_build_info',
    ]) {
      expect(served).toContain(name);
    }
  });

  it('the Grafana dashboard queries only metrics the relay serves', () => {
    const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/relay/deploy/grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const used = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets) for (const name of namesIn(target.expr)) used.add(name);
    }
    for (const name of used) expect(served, name).toContain(name);
    // Every metric the relay serves has a panel.
    expect([...served].filter((name) => !used.has(name))).toEqual([]);
  });

  it('the alert rules name only metrics the relay serves', () => {
    const rules = parse(readFileSync(join(REPO_ROOT, 'apps/relay/deploy/prometheus-alerts.yml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const alerts = rules.groups.flatMap((g) => g.rules);
    expect(alerts.length).toBeGreaterThan(5);
    for (const rule of alerts)
      for (const name of namesIn(rule.expr)) expect(served, `${rule.alert}: ${name}`).toContain(name);
  });

  it('docs/operations.md lists exactly the metrics the relay serves', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const table = [...doc.matchAll(/^\| `((?:wmp_relay|process)_[a-z0-9_]+)(?:\{[^`]*\})?` \|/gm)].map((m) => m[1]!);
    expect(new Set(table)).toEqual(served);
  });
});
