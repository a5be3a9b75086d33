// Relay key rotation with an overlap, on a real relay process: `admin rotate-key` announces the
// next id in the well-known document (signed by the current key) while the relay goes on proving
// the current one, so a client that pinned it keeps connecting; the first start after the switch
// time takes the next key and publishes the previous id with the same signature.
import { chmodSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { didKeyResolver, generateKeypair, jcsBytes, verifyDetached } from '@wmp/jcs-signing';
import { Peer, WmpSession } from '@wmp/session';
import { WebSocketClientTransport } from '@wmp/transports/node';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  announceRotation,
  applyRotation,
  RotationError,
  readRotation,
  rotationAnnouncement,
} from '../src/key-rotation.js';
import {
  CLIENT_CAPABILITIES,
  type RelayProcess,
  runRelay,
  startRelayProcess,
  waitFor,
} from './fixtures/relay-process.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-rotate-'));
const dataDir = join(dir, 'data');
const peers: Peer[] = [];
let relay: RelayProcess | undefined;

afterAll(async () => {
  for (const peer of peers) await peer.close().catch(() => undefined);
  relay?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const start = () => startRelayProcess(['--data-dir', dataDir, '--port', '0'], { timeoutMs: 60_000 });
const wellKnown = async (url: string) =>
  (await (await fetch(`${url}/.well-known/wmp-configuration`)).json()) as Record<string, any>;

/** A session whose client pinned `id` as the relay's (mutual authentication, core §4.4.5). */
async function openPinned(url: string, id: string): Promise<WmpSession> {
  const peer = new Peer(new WebSocketClientTransport({ url: `${url.replace(/^http/, 'ws')}/wmp`, WebSocket }));
  peers.push(peer);
  await peer.start();
  return WmpSession.open(peer, {
    signer: generateKeypair(),
    capabilities: CLIENT_CAPABILITIES,
    verifyResponder: { id },
  });
}

async function checkSignature(rotation: Record<string, any>, oldId: string, newId: string): Promise<void> {
  const statement = {
    type: 'wmp-relay-key-rotation',
    relay_id: oldId,
    next_relay_id: newId,
    switch_at: rotation.switch_at,
  };
  await expect(
    verifyDetached(rotation.signature, jcsBytes(statement), { key: didKeyResolver, signer: oldId }),
  ).resolves.toBeDefined();
  // Over anything else, it does not verify.
  await expect(
    verifyDetached(rotation.signature, jcsBytes({ ...statement, next_relay_id: oldId }), {
      key: didKeyResolver,
      signer: oldId,
    }),
  ).rejects.toThrow();
}

describe('wmp-relay admin rotate-key', () => {
  it('announces the next key while the old one still proves the relay, then switches at the next start', async () => {
    relay = await start();
    const oldId = (await wellKnown(relay.url)).relay_id as string;
    expect((await openPinned(relay.url, oldId)).responder).toBe(oldId);

    const rotated = await runRelay(['admin', 'rotate-key', '--overlap', '3', '--data-dir', dataDir, '--json']);
    expect(rotated.code).toBe(0);
    const { next_relay_id: newId, switch_at } = JSON.parse(rotated.stdout) as {
      next_relay_id: string;
      switch_at: string;
    };
    expect(newId).toMatch(/^did:key:z6Mk/);
    expect(newId).not.toBe(oldId);
    expect(statSync(join(dataDir, 'relay-identity.key.next')).mode & 0o777).toBe(0o600);
    expect(rotated.stdout).not.toMatch(/[0-9a-f]{64}/); // never the key itself

    // The running relay announces it (re-reading the record within seconds) and still is the old id.
    await expect.poll(async () => (await wellKnown(relay!.url)).relay_id_rotation?.next_relay_id).toBe(newId);
    const announced = await wellKnown(relay.url);
    expect(announced.relay_id).toBe(oldId);
    expect(announced.relay_id_rotation).toMatchObject({
      relay_id: oldId,
      next_relay_key: expect.stringMatching(/^z6Mk/),
      switch_at,
    });
    await checkSignature(announced.relay_id_rotation, oldId, newId);
    // The overlap: a client that pinned the old id connects as before.
    expect((await openPinned(relay.url, oldId)).responder).toBe(oldId);
    expect((await runRelay(['admin', 'rotate-key', '--data-dir', dataDir])).code).toBe(4); // one at a time

    // After the switch time, the next start takes the next key.
    await waitFor(() => Date.now() >= Date.parse(switch_at), 10_000, 'the switch time');
    relay.child.kill('SIGTERM');
    expect((await relay.exited).code).toBe(0);
    relay = await start();
    const switched = await wellKnown(relay.url);
    expect(switched.relay_id).toBe(newId);
    expect(switched.relay_id_rotation).toMatchObject({ previous_relay_id: oldId, relay_id: newId, switch_at });
    await checkSignature(switched.relay_id_rotation, oldId, newId);
    expect(relay.stderr()).toContain('"event":"relay.key_rotated"');
    expect(statSync(join(dataDir, 'relay-identity.key.previous')).mode & 0o777).toBe(0o600);
    expect((await openPinned(relay.url, newId)).responder).toBe(newId);
    // A client still pinned to the old id is refused now: it moves its pin, checked by the signature.
    await expect(openPinned(relay.url, oldId)).rejects.toMatchObject({ data: { reason: 'responder_auth_failed' } });
  });
});

describe('the rotation files', () => {
  function keyFile(): string {
    const file = join(mkdtempSync(join(dir, 'key-')), 'relay.key');
    writeFileSync(file, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    return file;
  }

  it('switches once the time has come, and a start that died after the swap only finishes the record', async () => {
    const file = keyFile();
    const record = await announceRotation(file, 60_000, 1_000);
    expect(applyRotation(file, 30_000)?.state).toBe('announced'); // too early: nothing changes
    expect(readFileSync(file, 'utf8')).toBe(`${'ab'.repeat(32)}\n`);
    // The key swapped but the record not yet written (a crash in between):
    renameSync(`${file}.next`, file);
    const switched = applyRotation(file, 61_000);
    expect(switched).toMatchObject({ state: 'switched', switched_at: 61_000, statement: record.statement });
    expect(readRotation(file)).toEqual(switched);
    // The previous id is published for the overlap after the switch, then nothing.
    expect(rotationAnnouncement(switched, 100_000)).toMatchObject({ previous_relay_id: record.statement.relay_id });
    expect(rotationAnnouncement(switched, 121_000)).toBeUndefined();
    await expect(announceRotation(file, 60_000, 100_000)).rejects.toBeInstanceOf(RotationError);
    await expect(announceRotation(file, 60_000, 121_000)).resolves.toMatchObject({ state: 'announced' });
  });

  it('refuses a key readable by others, and a next key that is not the announced one', async () => {
    const file = keyFile();
    chmodSync(file, 0o644);
    await expect(announceRotation(file, 0)).rejects.toThrow('must not be readable');
    chmodSync(file, 0o600);
    await announceRotation(file, 0, 1_000);
    writeFileSync(`${file}.next`, `${'cd'.repeat(32)}\n`, { mode: 0o600 });
    expect(() => applyRotation(file, 2_000)).toThrow('not the announced next key');
  });
});
