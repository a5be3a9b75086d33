// The relay started from its sources as a child process (as `wmp-relay` runs), over real sockets.

import { readFileSync } from 'node:fs';
import { generateKeypair, verifyRelayChain } from '@wmp/jcs-signing';
import { signRequest } from '@wmp/ohan-seal';
import { afterAll, describe, expect, it } from 'vitest';
import { type Client, openClient, type RelayProcess, startRelayProcess, waitFor } from './fixtures/relay-process.js';

let relay: RelayProcess | undefined;
const clients: Client[] = [];

afterAll(async () => {
  for (const c of clients) await c.peer.close().catch(() => undefined);
  if (relay && relay.child.exitCode === null && relay.child.signalCode === null) relay.child.kill('SIGKILL');
});

describe('wmp-relay as a process (tsx on the sources)', () => {
  it('serves health, well-known, metrics, the box and WMP sessions, then stops with 0 on SIGTERM', async () => {
    relay = await startRelayProcess(['--ephemeral', '--port', '0', '--log-level', 'debug'], { how: 'tsx-bin' });
    const { url } = relay;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(relay.stdout().trim().split('\n')).toEqual([`wmp-relay listening on ${url}`]);

    const health = (await (await fetch(`${url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', store: 'ok', closing: false });
    const relayId = health.relay_id as string;
    // The version of apps/relay's package.json, in /health and /metrics (and --version).
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(health.version).toBe(version);
    expect(relayId).toMatch(/^did:key:z6Mk/);

    const wk = (await (await fetch(`${url}/.well-known/wmp-configuration`)).json()) as Record<string, any>;
    expect(wk.relay_id).toBe(relayId);
    expect(wk.relay).toBe(`${url}/wmp`);
    expect(wk.endpoints.websocket).toBe(`${url.replace(/^http/, 'ws')}/wmp`);

    const limits = (await (await fetch(`${url}/ohan/v1/limits`)).json()) as Record<string, any>;
    expect(limits).toMatchObject({ protocol: 'ohan.relay.1', directory: true, stranger_bits: 18 });
    expect(limits.caps.box_bytes).toBe(1024 ** 3);

    // A signed box call: the box checks requests against the printed origin (port 0 included).
    const me = generateKeypair();
    const target = '/ohan/v1/events?after=0&limit=10';
    const authorization = await signRequest({ signer: me, origin: url, method: 'GET', target });
    const events = await fetch(`${url}${target}`, { headers: { authorization } });
    expect(events.status).toBe(200);
    expect(await events.json()).toEqual({ events: [], next: 0, more: false });

    // WMP: Alice on WebSocket, Bob on HTTP + SSE, through the relay.
    const alice = await openClient(url, 'ws');
    const bob = await openClient(url, 'http');
    clients.push(alice, bob);
    const secret = `content-${Math.random().toString(36).slice(2)}`;
    const { message_id } = (await alice.session.send([bob.keypair.did], { text: secret })) as { message_id: string };
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.body).toEqual({ text: secret });
    expect(bob.inbox[0]!.wmp.message_id).toBe(message_id);
    await expect(
      verifyRelayChain(
        { jsonrpc: '2.0', method: 'wmp.message.deliver', params: bob.inbox[0]! },
        { lastRelayId: relayId, allowUnsigned: true },
      ),
    ).resolves.toBe(1);

    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^wmp_relay_connections \d+$/m);
    expect(metrics).toMatch(/^wmp_relay_routed_total [1-9]\d*$/m);
    expect(metrics).toContain(`\nwmp_relay_build_info{version="${version}"} 1\n`);
    // The box's own: the signed fetch above, and its gauges.
    expect(metrics).toContain('\nwmp_relay_box_requests_total{route="fetch",status="200"} 1\n');
    expect(metrics).toMatch(/^wmp_relay_box_events 0$/m);
    expect(metrics).toMatch(/^wmp_relay_box_limit_bytes 1073741824$/m);

    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });

    // Logs: JSON lines only, never the message content.
    const lines = relay.stderr().trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.map((l) => JSON.parse(l).event)).toEqual(expect.arrayContaining(['relay.started', 'relay.stopped']));
    expect(relay.stderr()).not.toContain(secret);
  });
});
