import { b64urlEncode, generateKeypair, keypairFromSeed, utf8 } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import {
  generateP256Identity,
  inspectMessage,
  isSupportedCipherSuite,
  MlsClient,
  MlsGroup,
  SUPPORTED_CIPHER_SUITES,
  signatureKeyOfDid,
  verifyKeyPackage,
} from '../src/index.js';
import { exchange, expectRefused } from './harness.js';

describe('identities, credentials and cipher suites', () => {
  it('binds the key package to the participant key: its DID and its Ed25519 key', async () => {
    const keypair = generateKeypair();
    const client = await MlsClient.create({ identity: keypair });
    expect(client.identity).toBe(keypair.did);
    expect(client.cipherSuite).toBe(1);
    const kp = await client.createKeyPackage();
    expect(kp.keyPackage).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(inspectMessage(kp.keyPackage)).toEqual({ wireformat: 'key_package' });
    const verified = await verifyKeyPackage(kp.keyPackage);
    expect(verified).toEqual({ identity: keypair.did, cipherSuite: 1, ref: kp.ref, expires: kp.expires });
    const days = (Date.parse(kp.expires) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    expect(signatureKeyOfDid(keypair.did, 1)).toEqual(keypair.publicKey);
  });

  it('accepts did:jwk identities too, in their canonical form only', async () => {
    const jwk = generateKeypair({ didMethod: 'jwk' });
    expect(signatureKeyOfDid(jwk.did, 1)).toEqual(jwk.publicKey);
    const reordered = { kty: 'OKP', crv: 'Ed25519', x: b64urlEncode(jwk.publicKey) };
    expect(signatureKeyOfDid(`did:jwk:${b64urlEncode(utf8(JSON.stringify(reordered)))}`, 1)).toBeUndefined();
    expect(signatureKeyOfDid(`${jwk.did}#0`, 1)).toBeUndefined();
    const alice = await MlsClient.create({ identity: generateKeypair({ didMethod: 'jwk' }) });
    const bob = await MlsClient.create({ identity: generateKeypair() });
    const a = await MlsGroup.create(alice);
    const add = await a.add((await bob.createKeyPackage()).keyPackage);
    await a.confirmCommit();
    const b = await MlsGroup.join(bob, add.welcome!);
    expect(b.members[0]).toMatch(/^did:jwk:/);
    await exchange(a, [b], 'jwk');
    await exchange(b, [a], 'key');
  });

  it('refuses an identity whose DID does not name its key', async () => {
    const a = generateKeypair();
    const b = generateKeypair();
    await expectRefused(MlsClient.create({ identity: { ...a, did: b.did } }), 'invalid_identity');
    await expectRefused(MlsClient.create({ identity: { ...a, publicKey: b.publicKey } }), 'invalid_identity');
    await expectRefused(MlsClient.create({ identity: { ...a, exportSeed: b.exportSeed } }), 'invalid_identity');
    await expectRefused(MlsClient.create({ identity: { ...a, did: 'did:web:example.com' } }), 'invalid_identity');
    await expectRefused(MlsClient.create({ identity: { ...a, did: a.kid } }), 'invalid_identity');
    // An Ed25519 identity cannot sign for the P-256 suite.
    await expectRefused(MlsClient.create({ identity: a, cipherSuite: 2 }), 'invalid_identity');
    await expectRefused(MlsClient.create({ identity: a, cipherSuite: 3 as never }), 'unsupported_cipher_suite');
    expect(await MlsClient.create({ identity: keypairFromSeed(a.exportSeed()) })).toBeInstanceOf(MlsClient);
  });

  it('runs a group on suite 0x0002 (P-256) with did:jwk P-256 identities', async () => {
    expect(SUPPORTED_CIPHER_SUITES).toEqual([1, 2]);
    expect(isSupportedCipherSuite(2)).toBe(true);
    expect(isSupportedCipherSuite(3)).toBe(false);
    const aliceId = generateP256Identity();
    expect(aliceId.did).toMatch(/^did:jwk:/);
    expect(signatureKeyOfDid(aliceId.did, 2)).toEqual(aliceId.publicKey);
    expect(signatureKeyOfDid(aliceId.did, 1)).toBeUndefined();
    const alice = await MlsClient.create({ identity: aliceId, cipherSuite: 2 });
    const bob = await MlsClient.create({ identity: generateP256Identity(), cipherSuite: 2 });
    await expectRefused(MlsClient.create({ identity: aliceId }), 'invalid_identity');
    const kp = await bob.createKeyPackage();
    expect((await verifyKeyPackage(kp.keyPackage)).cipherSuite).toBe(2);
    await expectRefused(verifyKeyPackage(kp.keyPackage, { cipherSuite: 1 }), 'invalid_key_package');
    const a = await MlsGroup.create(alice);
    expect(a.cipherSuite).toBe(2);
    const add = await a.add(kp.keyPackage);
    await a.confirmCommit();
    const b = await MlsGroup.join(bob, add.welcome!);
    await exchange(a, [b], 'p-256');
    await exchange(b, [a], 'back');
    const wire = await b.encryptParams({ wmp: { sender: bob.identity }, body: 'x' });
    expect((await a.decryptParams(wire)).body).toBe('x');
    const restored = await MlsGroup.restore(b.save(), bob);
    await exchange(restored, [a], 'restored');
    // A suite-1 client holds no key package for a suite-2 Welcome.
    const other = await MlsClient.create({ identity: generateKeypair() });
    await other.createKeyPackage();
    await expectRefused(MlsGroup.join(other, add.welcome!), 'welcome_not_for_us');
  });
});
