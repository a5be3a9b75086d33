import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { b64urlEncode, utf8, verifyEd25519 } from '@wmp/jcs-signing';
import { createEvent, openEvent, verifyCard } from '@wmp/ohan-seal';
import { afterAll, describe, expect, it } from 'vitest';
import { IDENTITY_STORE_KEY, Identity, IdentityError, type IdentityJson, MemoryClientStore } from '../src/index.js';
import { FileStore } from '../src/node.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-identity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Identity', () => {
  it('generates a did:key identity with a separate X25519 encryption key', () => {
    const id = Identity.generate();
    expect(id.did).toBe(`did:key:${id.signingKey}`);
    expect(id.signingKey).toMatch(/^z6Mk[1-9A-HJ-NP-Za-km-z]+$/);
    expect(id.encKey).toMatch(/^z6LS[1-9A-HJ-NP-Za-km-z]+$/);
    expect(id.keypair.did).toBe(id.did);
    expect(Identity.generate().did).not.toBe(id.did);
    const data = utf8('challenge');
    expect(verifyEd25519(id.keypair.publicKey, data, id.keypair.sign(data))).toBe(true);
  });

  it('round-trips through its JSON form with the same keys', () => {
    const id = Identity.generate();
    const json = id.toJSON();
    expect(Object.keys(json).sort()).toEqual(['did', 'enc_secret', 'signing_seed', 'version']);
    expect(json.version).toBe(1);
    const again = Identity.fromJSON(JSON.parse(JSON.stringify(json)) as IdentityJson);
    expect([again.did, again.signingKey, again.encKey]).toEqual([id.did, id.signingKey, id.encKey]);
    expect(again.keypair.sign(utf8('x'))).toEqual(id.keypair.sign(utf8('x')));
  });

  it('imports existing secrets, with a fresh encryption key when none is given', () => {
    const seed = new Uint8Array(32).fill(7);
    const a = Identity.fromSecrets(seed);
    const b = Identity.fromSecrets(seed, a.encKeypair.secretKey);
    expect(b.did).toBe(a.did);
    expect(b.encKey).toBe(a.encKey);
    expect(Identity.fromSecrets(seed).encKey).not.toBe(a.encKey);
    expect(() => Identity.fromSecrets(new Uint8Array(31))).toThrow(IdentityError);
  });

  it('refuses malformed JSON forms with IdentityError', () => {
    const json = Identity.generate().toJSON();
    const other = Identity.generate().toJSON();
    const bad: unknown[] = [
      null,
      'text',
      { ...json, version: 2 },
      { ...json, did: other.did }, // the DID of another key
      { ...json, signing_seed: json.signing_seed.slice(1) },
      { ...json, enc_secret: `${json.enc_secret.slice(0, -1)}+` },
      { ...json, signing_seed: b64urlEncode(new Uint8Array(33)) },
      { ...json, enc_secret: undefined },
    ];
    for (const value of bad) {
      expect(() => Identity.fromJSON(value as IdentityJson)).toThrow(IdentityError);
    }
    try {
      Identity.fromJSON({ ...json, did: other.did });
    } catch (e) {
      expect((e as IdentityError).code).toBe('ERR_IDENTITY_INVALID');
      expect((e as Error).message).not.toContain(json.signing_seed);
    }
  });

  for (const [name, open] of [
    ['MemoryClientStore', () => new MemoryClientStore()],
    ['FileStore', () => new FileStore(join(dir, String(Math.random())))],
  ] as const) {
    it(`saves to and loads from a ${name}`, async () => {
      const store = open();
      expect(await Identity.load(store)).toBeUndefined();
      const created = await Identity.loadOrCreate(store);
      expect((await Identity.loadOrCreate(store)).did).toBe(created.did);
      const loaded = (await Identity.load(store))!;
      expect([loaded.did, loaded.encKey]).toEqual([created.did, created.encKey]);
      await store.set(IDENTITY_STORE_KEY, '{not json');
      await expect(Identity.load(store)).rejects.toBeInstanceOf(IdentityError);
    });
  }

  it('creates a verifiable card that mail can be sealed to', async () => {
    const bob = Identity.generate();
    const now = new Date('2026-11-29T12:00:00.500Z');
    const card = await bob.createCard(['https://box.example', 'http://127.0.0.1:8080'], now);
    expect(card).toMatchObject({
      protocol: 'ohan.card.1',
      key: bob.signingKey,
      enc: bob.encKey,
      relays: ['https://box.example', 'http://127.0.0.1:8080'],
      ts: '2026-11-29T12:00:00Z',
    });
    expect(verifyCard(card).ok).toBe(true);
    const alice = Identity.generate();
    const event = await createEvent({
      envelope: { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { body: 'hi' } },
      to: card,
      from: alice.keypair,
    });
    expect(openEvent(event, bob.encKeypair.secretKey).message).toMatchObject({ params: { body: 'hi' } });
    await expect(bob.createCard(['http://example.com'])).rejects.toThrow(TypeError);
  });
});
