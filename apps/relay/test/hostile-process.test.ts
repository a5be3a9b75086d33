// Issue 12, item 11, the parts only the process shows: `wmp-relay` (from its sources, a child
// process on a SQLite data directory) keeps its log JSON lines only however many requests are
// cut off mid-way, creates relay.db (and its WAL files) 0600 in a 0700 directory, and logs a full
// session store and exhausted connection slots once per interval. The hostile client is the
// relay-server tests' one.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { type ClientRequest, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair } from '@wmp/jcs-signing';
import { signRequest } from '@wmp/ohan-seal';
import { afterAll, describe, expect, it } from 'vitest';
import {
  authenticateRequest,
  checkRelayHealthy,
  createRequest,
  flood,
  metric,
  queueCanary,
  RawSocket,
} from '../../../packages/relay-server/test/fixtures/hostile-client.js';
import { waitFor } from '../../../test-support/wait-for.js';
import { type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';

const dirs: string[] = [];
const processes: RelayProcess[] = [];
afterAll(() => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const MiB = 1024 * 1024;

async function start(args: readonly string[]): Promise<{ relay: RelayProcess; dir: string }> {
  const dir = join(mkdtempSync(join(tmpdir(), 'wmp-relay-hostile-')), 'data');
  dirs.push(join(dir, '..'));
  const relay = await startRelayProcess(['--data-dir', dir, '--port', '0', '--log-level', 'debug', ...args]);
  processes.push(relay);
  return { relay, dir };
}

/** Every stderr line is one JSON object (docs/architecture.md, "Secrets"); stdout is the one line the app prints. */
function expectJsonLinesOnly(relay: RelayProcess): void {
  const lines = relay
    .stderr()
    .split('\n')
    .filter((l) => l !== '');
  const notJson = lines.filter((l) => {
    try {
      return typeof JSON.parse(l) !== 'object';
    } catch {
      return true;
    }
  });
  expect(notJson).toEqual([]);
  expect(relay.stdout().trim().split('\n')).toEqual([`wmp-relay listening on ${relay.url}`]);
}

const bodiesInFlight = (url: string) => metric(url, 'wmp_relay_budget_used_bytes{budget="bodies"}');

/**
 * A POST whose client goes away mid-body: it declares 5000 bytes, sends a few, waits until the
 * relay is reading them (its budget of bodies in flight holds them) and drops the connection;
 * resolves once the relay let go of the body.
 */
async function abandonBody(url: string, path: string): Promise<void> {
  const target = new URL(path, url);
  const req: ClientRequest = request({
    host: target.hostname,
    port: target.port,
    path: target.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': '5000' },
  });
  req.on('error', () => undefined);
  req.write('{"jsonrpc":"2.0","pad":"');
  await waitFor(async () => (await bodiesInFlight(url)) > 0, 15_000, 'the relay to read the body');
  req.destroy();
  await waitFor(async () => (await bodiesInFlight(url)) === 0, 15_000, 'the relay to let go of the body');
}

/** A request whose client goes away as soon as the answer starts (an event stream, say). */
function abandonAnswer(
  url: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string },
) {
  const target = new URL(options.path, url);
  return new Promise<void>((resolve) => {
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: options.method,
      headers: options.headers ?? {},
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.on('response', () => req.destroy());
    req.end(options.body);
  });
}

describe('wmp-relay under a client that gives up mid-way (issue 12 item 11)', { timeout: 60_000 }, () => {
  it('keeps stderr JSON lines only, and creates relay.db 0600 in a 0700 directory', async () => {
    const { relay, dir } = await start(['--unauthenticated-timeout', '1']);
    const { url } = relay;
    for (const file of ['relay.db', 'relay.db-wal', 'relay.db-shm', 'relay-identity.key']) {
      let mode: number | undefined;
      try {
        mode = statSync(join(dir, file)).mode & 0o777;
      } catch {
        continue; // -wal / -shm exist only while the database is open in WAL mode
      }
      expect(mode.toString(8), file).toBe('600');
    }
    expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');

    // One at a time, each body abandoned while the relay reads it: the binding's, the box's.
    for (let i = 0; i < 10; i++) {
      for (const path of ['/wmp', '/ohan/v1/events', '/ohan/v1/cards']) await abandonBody(url, path);
    }
    const me = generateKeypair();
    await flood(
      20,
      async () => {
        // A POST answered as an event stream, and a box event stream, abandoned once they start.
        await abandonAnswer(url, {
          method: 'POST',
          path: '/wmp',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(createRequest(generateKeypair().did)),
        });
        const authorization = await signRequest({
          signer: me,
          origin: url,
          method: 'GET',
          target: '/ohan/v1/events/stream',
        });
        await abandonAnswer(url, { method: 'GET', path: '/ohan/v1/events/stream', headers: { authorization } });
      },
      4,
    );
    // Whatever the HTTP adapter had to say about those requests has been said by the time the
    // relay let go of them all (their HTTP sessions end with the unauthenticated timeout).
    await waitFor(
      async () => (await metric(url, 'wmp_relay_connections')) === 0,
      30_000,
      'the cut-off sessions to end',
    );
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expectJsonLinesOnly(relay);
  });

  it('logs a full session store and exhausted connection slots once per interval, and recovers', async () => {
    const { relay } = await start([
      '--max-pending-sessions',
      '2',
      '--max-unauthenticated-connections',
      '4',
      '--pending-session-ttl',
      '1',
      '--limit-loopback',
    ]);
    const { url } = relay;
    const canary = await queueCanary(url);
    const rssAtStart = await metric(url, 'process_resident_memory_bytes');
    const socket = await RawSocket.open(url);
    const keys = Array.from({ length: 12 }, () => generateKeypair());
    const answers = await socket.batch(keys.map((k) => createRequest(k.did)));
    expect(answers.filter((a) => a.error?.code === -31007)).toHaveLength(10);
    const held = await flood(12, () => RawSocket.open(url), 4);
    await waitFor(
      async () => (await metric(url, 'wmp_relay_refusals_total{cause="unauthenticated_slots"}')) === 9,
      15_000,
      'nine refused connections',
    );
    const refused = () =>
      relay
        .stderr()
        .split('\n')
        .filter((l) => l.includes('"relay.refused"'))
        .map((l) => JSON.parse(l) as { cause: string; count: number });
    await waitFor(
      () => refused().some((r) => r.cause === 'unauthenticated_slots'),
      15_000,
      'the slots refusal in the log',
    );
    expect(refused().filter((r) => r.cause === 'session_store_full')).toMatchObject([{ count: 1 }]);
    expect(refused().filter((r) => r.cause === 'unauthenticated_slots')).toMatchObject([{ count: 1 }]);
    // The two that got in log in (the sweeper, every 30 s, would free their places too).
    for (const [i, a] of answers.entries()) {
      if (a.result === undefined) continue;
      const auth = await authenticateRequest(keys[i]!, a.result.wmp.session_id, a.result.challenge);
      expect((await socket.call(auth.method, auth.params)).result).toMatchObject({ authenticated: true });
    }
    for (const s of [...held, socket]) await s.close();
    await waitFor(async () => (await metric(url, 'wmp_relay_unauthenticated_connections')) === 0, 15_000, 'free slots');
    await checkRelayHealthy(url, { maxRssBytes: rssAtStart + 128 * MiB, canary });
    expectJsonLinesOnly(relay);
  });
});

describe('wmp-relay limits box requests per source (issue 23 item 7)', { timeout: 60_000 }, () => {
  it('on every route, behind --trusted-proxies: a fresh key per request is still one source', async () => {
    // Per key 1/s, burst 2: per source 4/s, burst 8. The proxy on loopback names the sources.
    const { relay } = await start([
      ...['--relay-only', '--box-rate', '1', '--box-rate-burst', '2', '--trusted-proxies', '127.0.0.1'],
    ]);
    const target = '/ohan/v1/allow';
    const signed = async (source: string) => {
      const authorization = await signRequest({ signer: generateKeypair(), origin: relay.url, method: 'GET', target });
      return fetch(`${relay.url}${target}`, { headers: { authorization, 'x-forwarded-for': source } });
    };
    const unsigned = (source: string) =>
      fetch(`${relay.url}/ohan/v1/limits`, { headers: { 'x-forwarded-for': source } });
    // From one place, at once: 30 throwaway keys (each within its own rate) and 30 unsigned asks.
    const answers = await flood(60, async (i) => {
      const answer = await (i % 2 ? signed('203.0.113.66') : unsigned('203.0.113.66'));
      return { route: i % 2 ? 'allow' : 'limits', status: answer.status, body: await answer.json() };
    });
    const admitted = answers.filter((a) => a.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(8);
    expect(admitted).toBeLessThan(30); // the burst and what refilled meanwhile, at 4 a second
    const refused = answers.filter((a) => a.status !== 200);
    for (const a of refused) expect(a.body).toEqual({ error: { code: 'rate_limited', message: 'too many requests' } });
    expect(new Set(refused.map((a) => `${a.route} ${a.status}`))).toEqual(new Set(['allow 429', 'limits 429']));
    // Another source is apart.
    expect((await signed('198.51.100.7')).status).toBe(200);
    expect((await unsigned('198.51.100.7')).status).toBe(200);
  });
});
