import { b64urlEncode, generateKeypair, type Keypair, utf8 } from '@wmp/jcs-signing';
import { MlsClient } from '@wmp/mls-bridge';
import { describe, expect, it } from 'vitest';
// Forged key packages are built with ts-mls through mls-bridge's own adapter (as its tests do):
// the package's API cannot make a key package whose credential does not match its key.
import { cipherSuiteImpl, leafCapabilities } from '../../mls-bridge/src/cipher-suites.js';
import { type Credential, encodeMlsMessage, generateKeyPackageWithKey } from '../../mls-bridge/src/ts-mls.js';
import { type Client, codeOf, relayTestbed } from './fixtures/relay-clients.js';

const testbed = relayTestbed();

/** A key package signed by `signer` whose credential is whatever we like. */
async function forge(credential: Credential, signer: Keypair): Promise<string> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const kp = await generateKeyPackageWithKey(
    credential,
    leafCapabilities(),
    { notBefore: now - 60n, notAfter: now + 3600n },
    [],
    { signKey: signer.exportSeed(), publicKey: signer.publicKey },
    await cipherSuiteImpl(1),
  );
  return b64urlEncode(
    encodeMlsMessage({ version: 'mls10', wireformat: 'mls_key_package', keyPackage: kp.publicPackage }),
  );
}

const basic = (identity: string): Credential => ({ credentialType: 'basic', identity: utf8(identity) });

/** What a publish was refused with: code and data. */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'accepted';
  } catch (e) {
    const { code, data } = e as { code?: number; data?: unknown };
    return { code, data };
  }
}

async function keyPackages(keypair: Keypair, n: number) {
  const mls = await MlsClient.create({ identity: keypair });
  const out = [];
  for (let i = 0; i < n; i++) {
    const kp = await mls.createKeyPackage();
    out.push({ key_package: kp.keyPackage, cipher_suite: kp.cipherSuite, expires: kp.expires });
  }
  return out;
}

const publish = (c: Client, key_packages: unknown[]) =>
  c.session.request('ohan.mls.keypackage.publish', { key_packages }) as Promise<{ accepted: number }>;
const fetchFor = (c: Client, identity: string, cipher_suite?: number) =>
  c.session.request('ohan.mls.keypackage.fetch', { identity, ...(cipher_suite ? { cipher_suite } : {}) }) as Promise<{
    identity: string;
    key_package: string;
    cipher_suite: number;
  }>;

describe('key packages at the relay (ohan.mls.keypackage.*)', () => {
  it('stores verified ones up to the per-identity cap and hands each out once, oldest first', async () => {
    const url = await testbed.setup({ limits: { maxKeyPackagesPerIdentity: 2 } });
    const alice = await testbed.open(url, { register: false });
    const bob = await testbed.open(url, { register: false });
    const kps = await keyPackages(alice.keypair, 3);
    expect(await publish(alice, kps)).toMatchObject({ accepted: 2 });
    // The same again is a retry: nothing added (the cap is reached anyway).
    expect(await publish(alice, kps.slice(0, 1))).toMatchObject({ accepted: 0 });
    await expect(fetchFor(bob, alice.keypair.did)).resolves.toEqual({
      wmp: expect.any(Object),
      identity: alice.keypair.did,
      key_package: kps[0]!.key_package,
      cipher_suite: 1,
    });
    // Anyone authenticated may take one, also for a cipher suite.
    await expect(fetchFor(alice, alice.keypair.did, 1)).resolves.toMatchObject({ key_package: kps[1]!.key_package });
    expect(await codeOf(fetchFor(bob, alice.keypair.did))).toBe(-31008);
    expect(await codeOf(fetchFor(bob, bob.keypair.did))).toBe(-31008);
    // Room again: the third is accepted now.
    expect(await publish(alice, kps.slice(2))).toMatchObject({ accepted: 1 });
    expect(await codeOf(fetchFor(bob, alice.keypair.did, 2))).toBe(-31008);
    await expect(fetchFor(bob, alice.keypair.did)).resolves.toMatchObject({ key_package: kps[2]!.key_package });
  });

  it('refuses a bad key package with a typed error and stores nothing of that call', async () => {
    const url = await testbed.setup();
    const alice = await testbed.open(url, { register: false });
    const bob = await testbed.open(url, { register: false });
    const eve = generateKeypair();
    const [good] = await keyPackages(alice.keypair, 1);
    const entry = (key_package: string, cipher_suite = 1) => ({ key_package, cipher_suite });

    // Its credential names Alice, but Eve's key signed it: the credential does not match the key.
    const claimsAlice = await forge(basic(alice.keypair.did), eve);
    expect(await refusal(publish(alice, [good, entry(claimsAlice)]))).toEqual({
      code: -31004,
      data: { reason: 'credential_mismatch', index: 1 },
    });
    for (const credential of [basic('did:web:example.com'), basic('alice@example.com'), basic(`${eve.did}#key-1`)]) {
      expect(await refusal(publish(alice, [entry(await forge(credential, eve))]))).toMatchObject({
        code: -31004,
        data: { reason: 'credential_mismatch' },
      });
    }
    // A valid key package of someone else: Alice may publish only her own.
    const [bobs] = await keyPackages(bob.keypair, 1);
    expect(await refusal(publish(alice, [bobs]))).toEqual({
      code: -31002,
      data: { reason: 'key package of another identity', index: 0 },
    });
    // Garbage, a tampered signature, a suite it is not of, a suite nobody runs.
    expect(await refusal(publish(alice, [entry('AAAA')]))).toMatchObject({
      code: -31004,
      data: { reason: 'malformed' },
    });
    const bytes = Buffer.from(good!.key_package, 'base64url');
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 1;
    expect(await refusal(publish(alice, [entry(bytes.toString('base64url'))]))).toMatchObject({
      data: { reason: 'invalid_key_package' },
    });
    expect(await refusal(publish(alice, [entry(good!.key_package, 2)]))).toMatchObject({
      data: { reason: 'invalid_key_package' },
    });
    expect(await refusal(publish(alice, [entry(good!.key_package, 3)]))).toMatchObject({
      data: { reason: 'unsupported_cipher_suite' },
    });
    expect(await codeOf(publish(alice, [entry('not base64url!')]))).toBe(-32602);
    // Nothing of the refused calls was stored; the good one still goes in afterwards.
    expect(await codeOf(fetchFor(bob, alice.keypair.did))).toBe(-31008);
    expect(await publish(alice, [good])).toMatchObject({ accepted: 1 });
    await expect(fetchFor(bob, alice.keypair.did)).resolves.toMatchObject({ key_package: good!.key_package });
  });

  it('never hands out an expired key package; the sweeper removes them', async () => {
    let clock = Date.now();
    const url = await testbed.setup({ now: () => clock, timings: { keyPackageTtlSeconds: 60 } });
    const alice = await testbed.open(url, { register: false });
    const kps = await keyPackages(alice.keypair, 2);
    // One with a publisher's expiry in 10 s, one held up to the relay's 60 s.
    kps[0]!.expires = new Date(clock + 10_000).toISOString();
    expect(await publish(alice, kps)).toMatchObject({ accepted: 2 });
    clock += 11_000;
    await expect(fetchFor(alice, alice.keypair.did)).resolves.toMatchObject({ key_package: kps[1]!.key_package });
    const stores = testbed.relay!.stores;
    expect(await stores.keyPackages.totals()).toMatchObject({ count: 1 }); // held until swept
    await testbed.relay!.core.sweeper.run();
    expect(await stores.keyPackages.totals()).toEqual({ count: 0, bytes: 0 });
    expect(await publish(alice, kps.slice(0, 1))).toMatchObject({ accepted: 0 }); // already expired
    const [later] = await keyPackages(alice.keypair, 1);
    expect(await publish(alice, [later])).toMatchObject({ accepted: 1 });
    clock += 61_000;
    expect(await codeOf(fetchFor(alice, alice.keypair.did))).toBe(-31008);
  });
});
