// Non-repudiation signatures (core §5.4) and relay chains (core §5.7) as the SDK makes and checks
// them, through a real relay on a real port: what a receiving application is told about who
// signed and whether it held, for did:key (EdDSA) and X.509 (ES256 with x5c) senders, on the
// client's own session and on sessions end to end.
import { generateKeypair, signMessage } from '@wmp/jcs-signing';
import { relayAuthenticators } from '@wmp/relay-server/node';
import { beforeAll, describe, expect, it } from 'vitest';
import { makePki, type TestPki } from '../../session/test/pki.js';
import { Identity } from '../src/identity/identity.js';
import type { IncomingSession, PeerMessage } from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();
let pki: TestPki;
beforeAll(async () => {
  pki = await makePki();
}, 60_000);

const wallet = () =>
  Identity.fromX509({
    certificatesPem: pki.dnsLeaf.pem + pki.intermediate.pem,
    privateKeyPem: pki.dnsLeaf.key.pkcs8Pem,
  });

describe('signatures on the client session', () => {
  it('signs with sign: true; the receiver is told who signed, that it held, and the relay chain', async () => {
    const { url, relay } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    await alice.client.send(bob.identity.did, { text: 'signed' }, { sign: true });
    await alice.client.send(bob.identity.did, { text: 'plain' });
    await waitFor(() => bob.inbox.length === 2);
    const [signed, plain] = bob.inbox;
    expect(signed!.signature).toEqual({ signer: alice.identity.did, valid: true, alg: 'EdDSA' });
    // The relay leaves its entry unsigned for a recipient on its own connection (`when-needed`).
    expect(signed!.relayChain).toMatchObject({ valid: true, hops: [{ relayId: relay.id, signed: false }] });
    expect(plain!.signature).toBeUndefined();
    expect(plain!.relayChain?.valid).toBe(true);
    expect(plain!.timestamp).toBeUndefined();
  });

  it('signs everything with signatures.always', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url, { signatures: { always: true } });
    const bob = await bed.client(url);
    await alice.client.send(bob.identity.did, 'one');
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.signature).toMatchObject({ signer: alice.identity.did, valid: true });
  });

  it('tells the application when a signature does not hold, and still hands the message over', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    const content = { to: [bob.identity.did], content_type: 'application/json', body: { amount: '10.00' } };
    const sign = async (signer: Parameters<typeof signMessage>[1], body: unknown) =>
      (
        (
          await signMessage(
            { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { wmp: {}, ...content, body } },
            signer,
          )
        ).params as unknown as { wmp: { signature: string } }
      ).wmp.signature;
    const mallory = generateKeypair();
    // Signed by someone else's key (the relay binds wmp.sender to Alice): signer_mismatch.
    await alice.client.request('wmp.message.deliver', {
      wmp: { signature: await sign(mallory, content.body) },
      ...content,
    });
    // Alice's signature over other content: signature.
    const forOther = await sign(alice.identity.keypair, { amount: '1000.00' });
    await alice.client.request('wmp.message.deliver', { wmp: { signature: forOther }, ...content });
    await waitFor(() => bob.inbox.length === 2);
    expect(bob.inbox[0]!.signature).toEqual({ signer: mallory.did, valid: false, reason: 'signer_mismatch' });
    expect(bob.inbox[1]!.signature).toEqual({ signer: alice.identity.did, valid: false, reason: 'signature' });
    expect(bob.inbox[1]!.body).toEqual({ amount: '10.00' });
  });

  it('an X.509 sender signs ES256 with its chain; the receiver checks it against its anchors', async () => {
    const { url } = await bed.relay({
      config: { authenticators: await relayAuthenticators({ trustAnchors: pki.root.pem }) },
    });
    const identity = await wallet();
    const sender = await bed.client(url, { identity });
    const trusting = await bed.client(url, { signatures: { trustAnchors: pki.root.pem } });
    const other = await bed.client(url);
    await sender.client.send([trusting.identity.did, other.identity.did], { order: 'PO-1' }, { sign: true });
    await waitFor(() => trusting.inbox.length === 1 && other.inbox.length === 1);
    expect(trusting.inbox[0]!.from).toBe('x509:san:dns:wallet.example.com');
    expect(trusting.inbox[0]!.signature).toEqual({
      signer: 'x509:san:dns:wallet.example.com',
      valid: true,
      alg: 'ES256',
    });
    // Without anchors for senders' certificates, nothing vouches for the chain.
    expect(other.inbox[0]!.signature).toEqual({
      signer: 'x509:san:dns:wallet.example.com',
      valid: false,
      reason: 'untrusted_chain',
      detail: 'no_trust_anchors',
    });
    // Anchors that are not the sender's CA's.
    const foreign = await bed.client(url, { signatures: { trustAnchors: pki.foreignRoot.pem } });
    await sender.client.send(foreign.identity.did, 'x', { sign: true });
    await waitFor(() => foreign.inbox.length === 1);
    expect(foreign.inbox[0]!.signature).toMatchObject({
      valid: false,
      reason: 'untrusted_chain',
      detail: 'untrusted_chain',
    });
  });
});

describe('signatures on sessions end to end', () => {
  it('a session that negotiated non_repudiation signs every delivery, both ways', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    const incoming: IncomingSession[] = [];
    await bob.client.onSession((s) => incoming.push(s), {
      capabilities: { messaging: {}, flows: {}, non_repudiation: {} },
    });
    const session = await alice.client.openSession(bob.identity.did, {
      capabilities: { messaging: {}, flows: {}, non_repudiation: {} },
    });
    expect(session.capabilities).toHaveProperty('non_repudiation');
    await waitFor(() => incoming.length === 1);
    const atBob: PeerMessage[] = [];
    incoming[0]!.on('message', (m) => {
      atBob.push(m);
    });
    const atAlice: PeerMessage[] = [];
    session.on('message', (m) => {
      atAlice.push(m);
    });
    await session.send({ text: 'hello Bob' });
    await incoming[0]!.send({ text: 'hello Alice' });
    await waitFor(() => atBob.length === 1 && atAlice.length === 1);
    expect(atBob[0]!.signature).toEqual({ signer: alice.identity.did, valid: true, alg: 'EdDSA' });
    expect(atAlice[0]!.signature).toEqual({ signer: bob.identity.did, valid: true, alg: 'EdDSA' });
  });

  it('without non_repudiation nothing is signed unless asked', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    const incoming: IncomingSession[] = [];
    await bob.client.onSession((s) => incoming.push(s));
    const session = await alice.client.openSession(bob.identity.did);
    await waitFor(() => incoming.length === 1);
    const atBob: PeerMessage[] = [];
    incoming[0]!.on('message', (m) => {
      atBob.push(m);
    });
    await session.send('plain');
    await session.send('signed', { sign: true });
    await waitFor(() => atBob.length === 2);
    expect(atBob[0]!.signature).toBeUndefined();
    expect(atBob[1]!.signature).toMatchObject({ signer: alice.identity.did, valid: true });
  });
});
