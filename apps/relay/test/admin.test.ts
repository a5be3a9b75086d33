// `wmp-relay admin` against a real relay process on a data directory (over its admin socket),
// then on the files once it stopped: list, purge, sessions, backup while it serves, restore,
// and the copy into a cluster's PostgreSQL that a cluster node then serves.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair } from '@wmp/jcs-signing';
import { createEvent, generateEncKeypair } from '@wmp/ohan-seal';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { startCluster, type TestCluster } from './fixtures/cluster.js';
import { type Client, openClient, type RelayProcess, runRelay, startRelayProcess } from './fixtures/relay-process.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-admin-'));
const dataDir = join(dir, 'data');
const clients: Client[] = [];
let relay: RelayProcess | undefined;
let cluster: TestCluster | undefined;

afterAll(async () => {
  for (const c of clients) await c.peer.close().catch(() => undefined);
  relay?.child.kill('SIGKILL');
  await cluster?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const admin = (...args: string[]) => runRelay(['admin', ...args, '--data-dir', dataDir]);
async function adminJson(...args: string[]): Promise<Record<string, any>> {
  const { code, stdout, stderr } = await admin(...args, '--json');
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as Record<string, any>;
}

const bob = generateKeypair();
const remote = generateKeypair();
let peerOrigin = '';
let boxKey = '';

async function start(): Promise<RelayProcess> {
  relay = await startRelayProcess([
    '--data-dir',
    dataDir,
    '--port',
    '0',
    '--relay-only',
    '--stranger-bits',
    '4',
    '--route',
    `${remote.did}=${peerOrigin}`,
  ]);
  return relay;
}

async function stop(): Promise<void> {
  relay!.child.kill('SIGTERM');
  expect((await relay!.exited).code).toBe(0);
}

describe('wmp-relay admin on a running relay (its admin socket)', () => {
  it('lists queues, an outbox and a box with counts, bytes and oldest age', async () => {
    peerOrigin = `http://127.0.0.1:${await freePort()}`; // a peer that is down: its outbox fills
    const { url } = await start();
    expect(statSync(join(dataDir, 'admin.sock')).mode & 0o777).toBe(0o600);
    const alice = await openClient(url);
    clients.push(alice);
    await alice.session.send([bob.did], { text: 'for bob, offline' });
    await alice.session.send([remote.did], { text: 'for a user of the peer' });
    const to = generateEncKeypair();
    const recipient = generateKeypair();
    boxKey = recipient.multikey;
    const sealed = await createEvent({
      envelope: { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { body: 'sealed' } },
      to: { key: recipient.multikey, enc: to.multikey },
      from: generateKeypair(),
      stampBits: 4,
    });
    expect((await fetch(`${url}/ohan/v1/events`, { method: 'POST', body: JSON.stringify(sealed) })).status).toBe(202);

    const listed = await adminJson('queues');
    expect(listed.queues).toEqual([
      {
        key: bob.did,
        count: 1,
        bytes: expect.any(Number),
        oldest_at: expect.any(String),
        oldest_age_seconds: expect.any(Number),
      },
    ]);
    expect(listed.queues[0].oldest_age_seconds).toBeLessThan(60);
    expect(listed.outboxes).toEqual([
      expect.objectContaining({ key: `relay:${peerOrigin}`, peer: peerOrigin, count: 1 }),
    ]);
    expect(listed.boxes).toEqual([expect.objectContaining({ key: boxKey, count: 1 })]);
    const text = await admin('queues');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('queues (1):');
    expect(text.stdout).toContain(bob.did);

    const status = await adminJson('status');
    expect(status).toMatchObject({
      running: true,
      relay_id: expect.stringMatching(/^did:key:/),
      store: expect.stringMatching(/^sqlite:/),
    });
  });

  it('lists sessions and closes one: the relay ends it for its connection', async () => {
    const alice = clients[0]!;
    const { sessions } = await adminJson('sessions');
    expect(sessions.map((s: { id: string }) => s.id)).toContain(alice.session.id);
    expect(await adminJson('sessions', 'close', alice.session.id)).toEqual({ closed: alice.session.id });
    expect((await adminJson('sessions')).sessions.map((s: { id: string }) => s.id)).not.toContain(alice.session.id);
    await expect(alice.session.send([bob.did], { text: 'after the close' })).rejects.toThrow();
    const missing = await admin('sessions', 'close', 'ses-nobody');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toBe('wmp-relay admin: no session with this id\n');
  });

  // Each command is a process: one test per step, so a busy machine does not add them up.
  it('backs up while serving, never over an existing file', async () => {
    const backup = join(dir, 'backup.db');
    expect((await admin('backup', '--to', backup)).code).toBe(0);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect((await admin('backup', '--to', backup)).code).toBe(4);
  });

  it('purges a queue, an outbox, a box and what expired', async () => {
    expect(await adminJson('purge', '--recipient', bob.did)).toEqual({ purged: 'queue', key: bob.did, removed: 1 });
    expect(await adminJson('purge', '--outbox', peerOrigin)).toMatchObject({ purged: 'outbox', removed: 1 });
    expect(await adminJson('purge', '--box', boxKey)).toEqual({ purged: 'box', key: boxKey, removed: 1 });
    expect(await adminJson('purge', '--expired')).toMatchObject({ purged: 'expired', messages: 0 });
    expect(await adminJson('queues')).toEqual({ queues: [], outboxes: [], boxes: [], truncated: false });
    expect((await admin('purge')).code).toBe(2);
  });

  it('refuses a restore while the relay runs', async () => {
    const refused = await admin('restore', '--from', join(dir, 'backup.db'));
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('stop it first');
  });
});

describe('wmp-relay admin on the files of a stopped relay', () => {
  it('restores the backup: the data directory holds what it held then, the replaced database kept', async () => {
    await stop();
    expect((await adminJson('queues')).queues).toEqual([]); // on the files, no relay running
    const restored = await adminJson('restore', '--from', join(dir, 'backup.db'));
    expect(restored.previous).toMatch(/relay\.db\.before-restore-/);
    const { queues, outboxes } = await adminJson('queues');
    expect(queues.map((q: { key: string }) => q.key)).toEqual([bob.did]);
    expect(outboxes).toHaveLength(1);
    expect((await admin('restore', '--from', join(dir, 'nothing.db'))).code).toBe(3);
  });

  it('migrates into an empty PostgreSQL database that a cluster node then serves', async () => {
    cluster = await startCluster('admin');
    const migrated = await adminJson('migrate', '--to', cluster.databaseUrl);
    expect(migrated.rows).toMatchObject({ wmp_messages: 2, wmp_queues: expect.any(Number) });
    expect((await admin('migrate', '--to', cluster.databaseUrl)).code).toBe(2); // not empty any more
    // The cluster's admin reads the database itself.
    const onCluster = await runRelay(['admin', 'queues', '--json', '--database-url', cluster.databaseUrl]);
    expect(onCluster.code).toBe(0);
    expect(JSON.parse(onCluster.stdout).queues).toEqual([expect.objectContaining({ key: bob.did, count: 1 })]);
    const node = await cluster.start('n1');
    const health = (await (await fetch(`${node.url}/health`)).json()) as { status: string };
    expect(health.status).toBe('ok');
  });
});
