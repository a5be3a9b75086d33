import { generateKeypair } from '@wmp/jcs-signing';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createJsonLogger } from '../src/node.js';
import { codeOf, relayTestbed } from './fixtures/relay-clients.js';

const testbed = relayTestbed();
const { setup, open } = testbed;

describe('the relay over HTTP', () => {
  it('publishes its configuration, its own key packages, health and metrics', async () => {
    const url = await setup({ limits: { maxMessageBytes: 65536, maxQueued: 50 } });
    const doc = (await (await fetch(`${url}/.well-known/wmp-configuration`)).json()) as Record<string, any>;
    expect(doc.supported_versions).toEqual(['0.1']);
    expect(doc.endpoints).toEqual({
      websocket: `${url.replace('http', 'ws')}/wmp`,
      https: `${url}/wmp`,
      sse: `${url}/wmp/events`,
      rpc: `${url}/wmp`,
      events: `${url}/wmp/events`,
    });
    expect(doc.relay).toBe(`${url}/wmp`);
    expect(doc.relay_id).toBe(testbed.relay!.id);
    expect(doc.relay_id).toMatch(/^did:key:z6Mk/);
    expect(doc.security_modes).toContain('tls');
    expect(doc.accepted_schemes).toEqual(['did']);
    expect(doc.accepted_identifier_schemes).toEqual(['did:jwk', 'did:key']);
    expect(doc.capabilities.messaging).toEqual({ max_size: 65536 });
    expect(doc.capabilities.offline).toEqual({ max_queued: 50, ttl: 86400, status_notifications: true });
    expect(doc.privacy).toMatchObject({ content_retention: 'until_delivered' });
    expect(await (await fetch(`${url}/.well-known/mls-key-packages`)).json()).toEqual({ key_packages: [] });
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok', store: 'ok' });

    const alice = await open(url);
    const bob = await open(url, { binding: 'http' });
    await alice.session.send([bob.keypair.did], 'counted');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^wmp_relay_connections 2$/m);
    expect(metrics).toMatch(/^wmp_relay_sessions 2$/m);
    expect(metrics).toMatch(/^wmp_relay_registered_connections 2$/m);
    expect(metrics).toMatch(/^wmp_relay_routed_total 1$/m);
    expect(metrics).toMatch(/^wmp_relay_deliveries_total 1$/m);
    expect(metrics).toMatch(/^wmp_relay_queued_messages 1$/m);
    expect(metrics).toMatch(/^wmp_relay_queued_bytes \d+$/m);
  });

  it('mounts a box app under /ohan/v1 when given one', async () => {
    const box = new Hono().get('/limits', (c) => c.json({ protocol: 'ohan.relay.1' }));
    const url = await setup({ box });
    expect(await (await fetch(`${url}/ohan/v1/limits`)).json()).toEqual({ protocol: 'ohan.relay.1' });
  });

  it('enforces its limits: message size, connections per identity, request rate', async () => {
    const url = await setup({
      limits: { maxMessageBytes: 4096, maxConnectionsPerIdentity: 1, requestsPerSecond: 1, requestBurst: 5 },
    });
    const big = await fetch(`${url}/wmp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'wmp.session.create', params: { pad: 'x'.repeat(5000) } }),
    });
    expect(big.status).toBe(413);

    const keypair = generateKeypair();
    await open(url, { keypair });
    const second = await open(url, { keypair, register: false });
    expect(await codeOf(second.register())).toBe(-31007);

    const chatty = await open(url, { register: false });
    const codes: unknown[] = [];
    for (let i = 0; i < 8; i++) codes.push(await codeOf(chatty.session.request('wmp.capability.list')));
    expect(codes).toContain(-31007);
  });

  it('logs JSON lines without addresses or content', async () => {
    const lines: string[] = [];
    const url = await setup({ logger: createJsonLogger({ level: 'debug', write: (l) => lines.push(l) }) });
    const alice = await open(url);
    await alice.session.send([alice.keypair.did], { secret: 'do-not-log' });
    await testbed.closeRelay();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(entry).toHaveProperty('event');
      expect(line).not.toContain('127.0.0.1');
      expect(line).not.toContain('do-not-log');
    }
  });
});
