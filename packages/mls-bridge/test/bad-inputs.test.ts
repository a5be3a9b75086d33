// Every bad input is refused with its typed -31004 error, and the group stays usable afterwards.
// Forged inputs are built with ts-mls directly (through the package's adapter), with real keys.
import { b64urlDecode, b64urlEncode, generateKeypair, type Keypair, utf8 } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { cipherSuiteImpl, leafCapabilities } from '../src/cipher-suites.js';
import { generateP256Identity, MlsGroup, verifyKeyPackage } from '../src/index.js';
import {
  type ClientConfig,
  type Credential,
  createCommit,
  createGroup,
  defaultKeyPackageEqualityConfig,
  defaultKeyRetentionConfig,
  defaultLifetimeConfig,
  defaultPaddingConfig,
  emptyPskIndex,
  encodeMlsMessage,
  generateKeyPackageWithKey,
  joinGroup,
  type KeyPackage,
  type PrivateKeyPackage,
} from '../src/ts-mls.js';
import { decodeMessage } from '../src/wire.js';
import { deliverCommit, exchange, expectRefused, groupOf, newClient, te } from './harness.js';

const now = BigInt(Math.floor(Date.now() / 1000));

/** What a careless implementation would run: ts-mls's accept-all credential check. */
const acceptAllConfig: ClientConfig = {
  keyRetentionConfig: defaultKeyRetentionConfig,
  lifetimeConfig: defaultLifetimeConfig,
  keyPackageEqualityConfig: defaultKeyPackageEqualityConfig,
  paddingConfig: defaultPaddingConfig,
  authService: { validateCredential: async () => true },
};

/** A key package signed by `signer` whose credential is whatever we like. */
async function forgeKeyPackage(
  credential: Credential,
  signer: Keypair,
): Promise<{ text: string; publicPackage: KeyPackage; privatePackage: PrivateKeyPackage }> {
  const kp = await generateKeyPackageWithKey(
    credential,
    leafCapabilities(),
    { notBefore: now - 60n, notAfter: now + 3600n },
    [],
    { signKey: signer.exportSeed(), publicKey: signer.publicKey },
    await cipherSuiteImpl(1),
  );
  const text = b64urlEncode(
    encodeMlsMessage({ version: 'mls10', wireformat: 'mls_key_package', keyPackage: kp.publicPackage }),
  );
  return { text, ...kp };
}

const basic = (identity: string): Credential => ({ credentialType: 'basic', identity: utf8(identity) });

/** Flips one bit of the decoded bytes at `at` (from the end when negative). */
function flip(text: string, at: number): string {
  const bytes = b64urlDecode(text);
  const i = at < 0 ? bytes.length + at : at;
  bytes[i] = bytes[i]! ^ 0x01;
  return b64urlEncode(bytes);
}

describe('bad inputs', () => {
  it('garbage ciphertext is refused and the group stays usable', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const good = await a.encrypt(te.encode('good'));
    const kp = (await (await newClient()).createKeyPackage()).keyPackage;
    await expectRefused(b.decrypt(''), 'malformed');
    await expectRefused(b.decrypt('not base64url!'), 'malformed');
    await expectRefused(b.decrypt(`${good.ciphertext}=`), 'malformed');
    await expectRefused(b.decrypt(b64urlEncode(crypto.getRandomValues(new Uint8Array(300)))), 'malformed');
    await expectRefused(b.decrypt(good.ciphertext.slice(0, -8)), 'malformed');
    await expectRefused(b.decrypt(`${good.ciphertext}AA`), 'malformed');
    await expectRefused(b.decrypt(kp), 'malformed');
    await expectRefused(b.process(kp), 'malformed');
    // Well framed, but the ciphertext or the sender data was tampered with.
    await expectRefused(b.decrypt(flip(good.ciphertext, -1)), 'decrypt_failed');
    await expectRefused(b.decrypt(flip(good.ciphertext, -40)), 'decrypt_failed');
    // The untouched message still decrypts: refusals consumed nothing.
    expect((await b.decrypt(good.ciphertext)).sender).toBe(a.identity);
    // A replay does not.
    await expectRefused(b.decrypt(good.ciphertext), 'decrypt_failed');
    await exchange(a, [b], 'still usable');
    await exchange(b, [a], 'both ways');
  });

  it('a message for an unknown or forgotten epoch is refused', async () => {
    const { groups, relay } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    const old = await a.encrypt(te.encode('epoch 1'));
    // b misses a commit: what c then sends is from an epoch b has not reached.
    const upd = await a.update();
    expect(await deliverCommit(relay, a, upd, [c])).toBe(true);
    const ahead = await c.encrypt(te.encode('epoch 2'));
    await expectRefused(b.decrypt(ahead.ciphertext), 'unknown_epoch');
    await b.process(upd.commit);
    expect((await b.decrypt(ahead.ciphertext)).epoch).toBe(2);
    // Past epochs are kept for 4 commits, then forgotten.
    for (let i = 0; i < 4; i++) expect(await deliverCommit(relay, b, await b.update(), [a])).toBe(true);
    await expectRefused(a.decrypt(old.ciphertext), 'epoch_too_old');
    // A commit from a past epoch is refused too.
    await expectRefused(a.process(upd.commit), 'epoch_too_old');
    await exchange(a, [b], 'usable');
  });

  it('a message for another group is refused', async () => {
    const one = await groupOf(2);
    const two = await groupOf(2);
    const m = await two.groups[0]!.encrypt(te.encode('elsewhere'));
    await expectRefused(one.groups[1]!.decrypt(m.ciphertext), 'wrong_group');
    await exchange(one.groups[0]!, [one.groups[1]!], 'usable');
  });

  it('a welcome for someone else is refused', async () => {
    const { groups } = await groupOf(1);
    const carol = await newClient();
    const dave = await newClient();
    await dave.createKeyPackage();
    const add = await groups[0]!.add((await carol.createKeyPackage()).keyPackage);
    await expectRefused(MlsGroup.join(dave, add.welcome!), 'welcome_not_for_us');
    await expectRefused(MlsGroup.join(dave, add.commit), 'malformed');
    await expectRefused(MlsGroup.join(dave, 'AAEA'), 'malformed');
    // The Welcome still works for Carol.
    await groups[0]!.confirmCommit();
    const c = await MlsGroup.join(carol, add.welcome!);
    await exchange(c, [groups[0]!], 'hi');
  });

  it('a key package whose credential does not match its key is refused', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const eve = generateKeypair();
    const alice = generateKeypair();
    const forged = [
      // Eve signs a key package claiming to be Alice.
      await forgeKeyPackage(basic(alice.did), eve),
      // Not a DID at all, or a DID method that names no key.
      await forgeKeyPackage(basic('alice@example.com'), eve),
      await forgeKeyPackage(basic('did:web:example.com'), eve),
      // Eve's own DID, but as a DID URL (one member, one spelling).
      await forgeKeyPackage(basic(`${eve.did}#${eve.did.slice(8)}`), eve),
      // An x509 credential.
      await forgeKeyPackage({ credentialType: 'x509', certificates: [new Uint8Array(10)] }, eve),
    ];
    for (const f of forged) {
      await expectRefused(verifyKeyPackage(f.text), 'credential_mismatch');
      await expectRefused(a.add(f.text), 'credential_mismatch');
    }
    // Signed by someone else than the leaf key: a tampered signature.
    const honest = await forgeKeyPackage(basic(eve.did), eve);
    expect(await verifyKeyPackage(honest.text)).toMatchObject({ identity: eve.did, cipherSuite: 1 });
    await expectRefused(verifyKeyPackage(flip(honest.text, -3)), 'invalid_key_package');
    await expectRefused(a.add(flip(honest.text, -3)), 'invalid_key_package');
    // Another suite than the group's, and an expired one.
    const p256 = await (await newClient({ identity: generateP256Identity(), cipherSuite: 2 })).createKeyPackage();
    await expectRefused(a.add(p256.keyPackage), 'invalid_key_package');
    await expectRefused(verifyKeyPackage(honest.text, { now: Date.now() + 2 * 3600_000 }), 'invalid_key_package');
    // A member cannot be added twice.
    const xena = await newClient();
    const twice = [(await xena.createKeyPackage()).keyPackage, (await xena.createKeyPackage()).keyPackage];
    await expectRefused(a.add(twice), 'already_member');
    await expectRefused(a.add([]), 'invalid_params');
    expect(a.pendingCommit).toBeUndefined();
    await exchange(a, [b], 'usable');
  });

  it('a commit adding a forged member is refused by every honest member', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    // Mallory is a legitimate member who runs ts-mls with the accept-all check.
    const mallory = generateKeypair();
    const cs = await cipherSuiteImpl(1);
    const mkp = await forgeKeyPackage(basic(mallory.did), mallory);
    const add = await a.add(mkp.text);
    await a.confirmCommit();
    await b.process(add.commit);
    const raw = await joinGroup(
      decodeMessage(add.welcome!, 'mls_welcome').welcome,
      mkp.publicPackage,
      mkp.privatePackage,
      emptyPskIndex,
      cs,
      undefined,
      undefined,
      acceptAllConfig,
    );
    const forged = await forgeKeyPackage(basic(generateKeypair().did), generateKeypair());
    const bad = await createCommit(
      { state: raw, cipherSuite: cs },
      { extraProposals: [{ proposalType: 'add', add: { keyPackage: forged.publicPackage } }] },
    );
    const commit = b64urlEncode(encodeMlsMessage(bad.commit));
    await expectRefused(a.process(commit), 'commit_invalid');
    await expectRefused(b.process(commit), 'commit_invalid');
    expect(a.members).toEqual([a.identity, b.identity, mallory.did]);
    await exchange(a, [b], 'usable');
  });

  it('a welcome into a group with a forged member is refused', async () => {
    const cs = await cipherSuiteImpl(1);
    const mallory = generateKeypair();
    const founder = await forgeKeyPackage(basic('mallory'), mallory);
    const state = await createGroup(
      utf8('forged'),
      founder.publicPackage,
      founder.privatePackage,
      [],
      cs,
      acceptAllConfig,
    );
    const carol = await newClient();
    const kp = decodeMessage((await carol.createKeyPackage()).keyPackage, 'mls_key_package').keyPackage;
    const r = await createCommit(
      { state, cipherSuite: cs },
      { extraProposals: [{ proposalType: 'add', add: { keyPackage: kp } }], ratchetTreeExtension: true },
    );
    const welcome = b64urlEncode(
      encodeMlsMessage({ version: 'mls10', wireformat: 'mls_welcome', welcome: r.welcome! }),
    );
    await expectRefused(MlsGroup.join(carol, welcome), 'invalid_welcome');
    // The key package was not used up by the refused Welcome.
    expect(carol.pendingKeyPackages).toHaveLength(1);
  });

  it('removing a non-member is refused', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    await expectRefused(a.remove(generateKeypair().did), 'not_a_member');
    await expectRefused(a.remove([b.identity, 'did:key:nobody']), 'not_a_member');
    await expectRefused(a.proposeRemove('did:key:nobody'), 'not_a_member');
    expect(a.pendingCommit).toBeUndefined();
    await exchange(a, [b], 'usable');
  });

  it('a tampered commit is refused', async () => {
    const { groups, relay } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    const upd = await a.update();
    await expectRefused(b.process(flip(upd.commit, -2)), 'commit_invalid');
    expect(await deliverCommit(relay, a, upd, [b, c])).toBe(true);
    await exchange(b, [a, c], 'usable');
  });
});
