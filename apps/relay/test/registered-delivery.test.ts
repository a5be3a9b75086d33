// Registered delivery through wmp-relay processes (issue 26): a scheduled message survives a
// restart of the relay (SQLite) and the death of the cluster node it was sent to (PostgreSQL);
// the flags turn delegation and scheduled delivery off (-31005, advertised) and publish the
// recipient metadata the relay enforces.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair, signMandate } from '@wmp/jcs-signing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { refusal } from '../../../test-support/code-of.js';
import { freePort } from '../../../test-support/services/index.js';
import { startCluster, type TestCluster } from './fixtures/cluster.js';
import { type Client, openClient, type RelayProcess, startRelayProcess, waitFor } from './fixtures/relay-process.js';

const dirs: string[] = [];
const running: RelayProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.peer.close().catch(() => undefined);
  for (const r of running.splice(0)) {
    r.child.kill('SIGKILL');
    await r.exited;
  }
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(args: readonly string[]): Promise<RelayProcess> {
  const r = await startRelayProcess([...args, '--log-level', 'warn', '--rate', '100000', '--rate-burst', '100000'], {
    timeoutMs: 60_000,
  });
  running.push(r);
  return r;
}

async function client(url: string, keypair = generateKeypair()): Promise<Client> {
  const c = await openClient(url, 'ws', keypair);
  clients.push(c);
  return c;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('scheduled delivery is durable', () => {
  it('a message scheduled before the relay is killed is handed over after its restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-scheduled-'));
    dirs.push(dir);
    const port = await freePort();
    const args = ['--port', String(port), '--data-dir', dir];
    const first = await start(args);
    const alice = await client(first.url);
    const bob = generateKeypair();
    const due = Date.now() + 4000;
    const sent = (await alice.session.request('wmp.message.deliver', {
      wmp: { deliver_after: iso(due) },
      to: [bob.did],
      body: { survives: 'a restart' },
    })) as { message_id: string; status: string };
    expect(sent.status).toBe('queued');
    first.child.kill('SIGKILL');
    await first.exited;
    running.splice(running.indexOf(first), 1);
    const second = await start(args);
    const b = await client(second.url, bob);
    await waitFor(() => b.inbox.length === 1, 20_000, 'the scheduled message after the restart');
    expect(Date.now()).toBeGreaterThanOrEqual(due);
    expect(b.inbox[0]).toMatchObject({ body: { survives: 'a restart' }, wmp: { message_id: sent.message_id } });
  });

  describe('on a cluster', () => {
    let cluster: TestCluster | undefined;
    afterAll(async () => {
      await cluster?.destroy();
    });

    it("a message scheduled on a node that dies is handed over by another node (the queue is PostgreSQL's)", async () => {
      cluster = await startCluster('scheduled');
      const [a, b] = [await cluster.start('a'), await cluster.start('b')];
      const alice = await client(a.url);
      const bob = generateKeypair();
      const bobClient = await client(b.url, bob);
      const due = Date.now() + 3000;
      const { message_id } = (await alice.session.request('wmp.message.deliver', {
        wmp: { deliver_after: iso(due) },
        to: [bob.did],
        body: { survives: 'a node' },
      })) as { message_id: string };
      a.child.kill('SIGKILL');
      await a.exited;
      await waitFor(() => bobClient.inbox.length === 1, 20_000, 'the scheduled message from the other node');
      expect(Date.now()).toBeGreaterThanOrEqual(due);
      expect(bobClient.inbox[0]).toMatchObject({ body: { survives: 'a node' }, wmp: { message_id } });
    });
  });
});

describe('registered delivery flags', () => {
  it('--no-delegation and --no-scheduled-delivery: advertised false, and what asks for them is -31005', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-registered-'));
    dirs.push(dir);
    const relay = await start(['--port', '0', '--data-dir', dir, '--no-delegation', '--no-scheduled-delivery']);
    const doc = await (await fetch(`${relay.url}/.well-known/wmp-configuration`)).json();
    expect(doc.erds).toMatchObject({ delegation: false, scheduled_delivery: false });
    const [p, d, bob] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const delegate = await client(relay.url, d);
    const credential = await signMandate(
      { delegate: d.did, principal: p.did, scope: ['submit'], valid_until: iso(Date.now() + 3600_000) },
      p,
    );
    expect(
      await refusal(
        delegate.session.request('wmp.message.deliver', {
          wmp: { sender: p.did, sender_delegate: { id: d.did, authorization: { type: 'mandate', credential } } },
          to: [bob.did],
          body: {},
        }),
      ),
    ).toEqual({ code: -31005, data: { capability: 'erds', unsupported: ['delegation'] } });
    expect(
      await refusal(
        delegate.session.request('wmp.message.deliver', {
          wmp: { deliver_after: iso(Date.now() + 60_000) },
          to: [bob.did],
          body: {},
        }),
      ),
    ).toEqual({ code: -31005, data: { capability: 'erds', unsupported: ['scheduled_delivery'] } });
  });

  it('recipient metadata from the flags is published and enforced', async () => {
    const relay = await start([
      '--port',
      '0',
      '--ephemeral',
      '--accepted-content-types',
      'application/json',
      '--recipient-max-message-size',
      '8KiB',
      '--consignment-preference',
      'consented',
      '--assurance',
      'signed_challenge=low',
    ]);
    const doc = await (await fetch(`${relay.url}/.well-known/wmp-configuration`)).json();
    expect(doc.recipient_metadata).toEqual({
      accepted_content_types: ['application/json'],
      max_message_size: 8192,
      consignment_preferences: 'consented',
      encryption_required: false,
    });
    const alice = await client(relay.url);
    expect(
      await refusal(
        alice.session.request('wmp.message.deliver', {
          to: [generateKeypair().did],
          content_type: 'text/html',
          body: '<p>',
        }),
      ),
    ).toEqual({ code: -31005, data: { capability: 'recipient_metadata', unsupported: ['content_type'] } });
  });
});
