import { contentHash, verifyEvidence, verifyMessage, verifyRelayChain } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { collectEvidence, EVIDENCE_CAPABILITIES, signedSend, typesOf } from '../../../test-support/evidence-clients.js';
import { MemoryRelayStores } from '../src/index.js';
import { asMessage, CLIENT_CAPABILITIES, relayTestbed, waitFor } from './fixtures/relay-clients.js';

// The evidence profile at one relay (wmp-tables §9), through a real relay on a real port: a
// session that negotiated `evidence` gets a signed record of each event the relay witnesses, as
// `wmp.evidence.notify` through its queue, and acknowledges them with `wmp.evidence.ack`.
const testbed = relayTestbed();

describe('evidence records at one relay', () => {
  it('records submission, delivery, handover and retrieval, each signed by the relay, to the sender', async () => {
    const url = await testbed.setup();
    const relayId = testbed.relay!.id;
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url);
    const notifies = collectEvidence(alice);
    expect(alice.session.capabilities.evidence).toMatchObject({
      repository: `${url}/evidence`,
      retention_period: 'P5Y',
      signing_algorithm: 'EdDSA',
    });

    const sent = await signedSend(alice, [bob.keypair.did], { invoice: 'INV-1' });
    await waitFor(() => bob.inbox.length === 1);
    await bob.session.notify('wmp.message.ack', { message_ids: [sent.message_id], status: 'received' });
    await waitFor(() => notifies.length === 4);
    expect(typesOf(notifies)).toEqual([
      'submission_accepted',
      'delivery_confirmed',
      'content_handover',
      'retrieval_confirmed',
    ]);

    const hash = contentHash(asMessage(bob.inbox[0]!));
    const first = notifies[0]!.evidence;
    for (const n of notifies) {
      const record = n.evidence;
      expect(record).toMatchObject({
        evidence_version: '1.0',
        original_message_id: sent.message_id,
        original_sender: alice.keypair.did,
        original_content_hash: { algorithm: 'sha-256', value: hash },
        session_id: alice.session.id,
        evidence_issuer: { id: relayId, name: url },
      });
      // The record's JWS holds for the relay's key, and so does the notify's own signature.
      await expect(verifyEvidence(record, n.signed_evidence, { issuer: relayId })).resolves.toMatchObject({
        issuer: relayId,
      });
      await expect(verifyMessage({ jsonrpc: '2.0', method: 'wmp.evidence.notify', params: n })).resolves.toMatchObject({
        signer: relayId,
      });
      expect(n.wmp.message_id).toBe(record.evidence_id);
      expect(n.timestamp_token).toBeUndefined(); // no TSA configured
    }
    expect(first.original_recipient).toBeUndefined();
    for (const n of notifies.slice(1)) {
      expect(n.evidence.original_recipient).toBe(bob.keypair.did);
      expect(n.evidence.previous_evidence_id).toBe(first.evidence_id);
    }
    // A record changed by anyone is no longer the relay's.
    await expect(
      verifyEvidence({ ...first, event_type: 'submission_rejected' }, notifies[0]!.signed_evidence),
    ).rejects.toMatchObject({ code: -31010, data: { reason: 'signature' } });
    // Acknowledged: nothing of the relay's stays in Alice's queue; the records stay in the repository.
    await waitFor(async () => (await testbed.relay!.stores.queue.stats(alice.keypair.did)).count === 0);
    expect((await testbed.relay!.stores.evidence.totals()).count).toBe(4);
  });

  it('keeps the notifications of a sender who is away and hands them over, in order, when it is back', async () => {
    const url = await testbed.setup();
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url);
    const sent = await signedSend(alice, [bob.keypair.did], 'while you are away');
    await testbed.disconnect(alice);
    await waitFor(() => bob.inbox.length === 1);
    await bob.session.notify('wmp.message.ack', { message_ids: [sent.message_id], status: 'received' });
    const queue = testbed.relay!.stores.queue;
    await waitFor(async () => (await queue.stats(alice.keypair.did)).count === 4);

    // Back on a new connection and session under evidence: everything kept comes, then is acknowledged.
    const again = await testbed.open(url, {
      capabilities: EVIDENCE_CAPABILITIES,
      keypair: alice.keypair,
      register: false,
    });
    const notifies = collectEvidence(again);
    await again.register();
    await waitFor(() => notifies.length === 4);
    expect(typesOf(notifies)).toEqual([
      'submission_accepted',
      'delivery_confirmed',
      'content_handover',
      'retrieval_confirmed',
    ]);
    await waitFor(async () => (await queue.stats(alice.keypair.did)).count === 0);
  });

  it('sends nothing to a session that did not negotiate evidence, and records only the types negotiated', async () => {
    const url = await testbed.setup();
    const only = { ...CLIENT_CAPABILITIES, evidence: { event_types: ['delivery_confirmed', 'no_such_event'] } };
    const alice = await testbed.open(url, { capabilities: only });
    expect(alice.session.capabilities.evidence).toMatchObject({ event_types: ['delivery_confirmed'] });
    const plain = await testbed.open(url);
    const bob = await testbed.open(url);
    const notifies = collectEvidence(alice);
    await signedSend(alice, [bob.keypair.did], 'one');
    await plain.session.send([bob.keypair.did], 'two');
    await waitFor(() => bob.inbox.length === 2 && notifies.length === 1);
    expect(typesOf(notifies)).toEqual(['delivery_confirmed']);
    expect(plain.session.capabilities.evidence).toBeUndefined();
    await waitFor(async () => (await testbed.relay!.stores.evidence.totals()).count === 1);
  });

  it('signs its relay_chain entry under evidence (service class registered), and only then by default', async () => {
    const url = await testbed.setup();
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const plain = await testbed.open(url);
    const bob = await testbed.open(url);
    await signedSend(alice, [bob.keypair.did], 'registered');
    await plain.session.send([bob.keypair.did], 'plain');
    await waitFor(() => bob.inbox.length === 2);
    const [registered, unsigned] = bob.inbox.map((m) => m.wmp.relay_chain[0]);
    expect(registered).toMatchObject({ relay_id: testbed.relay!.id, service_class: 'registered' });
    expect(typeof registered.signature).toBe('string');
    expect(Object.keys(unsigned).sort()).toEqual(['relay', 'relay_id', 'timestamp']);
    await expect(verifyRelayChain(asMessage(bob.inbox[0]!), { lastRelayId: testbed.relay!.id })).resolves.toBe(1);
    // A chain under evidence with its signature taken away is refused even with allowUnsigned.
    const { signature: _s, ...stripped } = registered;
    const withoutSignature = { ...bob.inbox[0]!, wmp: { ...bob.inbox[0]!.wmp, relay_chain: [stripped] } };
    await expect(verifyRelayChain(asMessage(withoutSignature), { allowUnsigned: true })).rejects.toMatchObject({
      data: { reason: 'missing', hop: 0 },
    });
  });

  it('with relayChainSignatures always, signs every entry (no service class without evidence)', async () => {
    const url = await testbed.setup({ relayChainSignatures: 'always' });
    const alice = await testbed.open(url);
    const bob = await testbed.open(url);
    await alice.session.send([bob.keypair.did], { text: 'hi' });
    await waitFor(() => bob.inbox.length === 1);
    const entry = bob.inbox[0]!.wmp.relay_chain[0];
    expect(Object.keys(entry).sort()).toEqual(['relay', 'relay_id', 'signature', 'timestamp']);
    await expect(verifyRelayChain(asMessage(bob.inbox[0]!), { lastRelayId: testbed.relay!.id })).resolves.toBe(1);
    await expect(verifyRelayChain(asMessage({ ...bob.inbox[0]!, body: { text: 'changed' } }))).rejects.toMatchObject({
      code: -31010,
      data: { reason: 'signature' },
    });
  });
});

describe('refusals under evidence', () => {
  it('refuses an unsigned deliver with -31009 and a badly signed one with -31010, each recorded', async () => {
    const url = await testbed.setup();
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url);
    const notifies = collectEvidence(alice);
    const unsigned = await alice.session
      .request('wmp.message.deliver', { to: [bob.keypair.did], body: 'x', wmp: { client_message_id: 'c-1' } })
      .catch((e: unknown) => e);
    expect(unsigned).toMatchObject({ code: -31009, data: { reason: 'signature_required' } });
    // Signed by someone else: not the sender's signature.
    const mallory = await testbed.open(url);
    const forged = await signedSend(
      { session: alice.session, keypair: mallory.keypair },
      [bob.keypair.did],
      'forged',
    ).catch((e: unknown) => e);
    expect(forged).toMatchObject({ code: -31010, data: { reason: 'signer_mismatch' } });
    await waitFor(() => notifies.length === 2);
    expect(typesOf(notifies)).toEqual(['submission_rejected', 'submission_rejected']);
    expect(notifies[0]!.evidence).toMatchObject({
      original_message_id: 'c-1',
      event_reason: { code: 'policy_violation', details: { error_code: -31009, reason: 'signature_required' } },
    });
    expect(notifies[1]!.evidence.event_reason).toMatchObject({
      code: 'invalid_format',
      details: { error_code: -31010, reason: 'signer_mismatch' },
    });
    expect(bob.inbox).toHaveLength(0);
  });

  it('refuses a message under evidence with -31009 repository_full when no record can be kept', async () => {
    const url = await testbed.setup({
      store: (limits) => new MemoryRelayStores({ ...limits, evidence: { maxRecords: 2 } }),
    });
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url);
    collectEvidence(alice);
    await signedSend(alice, [bob.keypair.did], 'one');
    await waitFor(async () => (await testbed.relay!.stores.evidence.totals()).count === 2);
    const refused = await signedSend(alice, [bob.keypair.did], 'two').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: -31009, data: { reason: 'repository_full' } });
    await waitFor(() => bob.inbox.length === 1);
    // A session without evidence is not held to the repository's cap.
    const plain = await testbed.open(url);
    await plain.session.send([bob.keypair.did], 'three');
    await waitFor(() => bob.inbox.length === 2);
  });

  it('offers no evidence when it is off: nothing recorded, entries unsigned', async () => {
    const url = await testbed.setup({ evidence: { enabled: false } });
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url);
    expect(alice.session.capabilities.evidence).toBeUndefined();
    const doc = (await (await fetch(`${url}/.well-known/wmp-configuration`)).json()) as { capabilities: object };
    expect(doc.capabilities).not.toHaveProperty('evidence');
    await alice.session.send([bob.keypair.did], 'plain');
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.wmp.relay_chain[0].signature).toBeUndefined();
    // Its acknowledgement method is refused too: the capability was not negotiated.
    await expect(
      alice.session.request('wmp.evidence.ack', { evidence_ids: ['ev-x'], status: 'stored' }),
    ).rejects.toMatchObject({ code: -31005 });
    expect((await testbed.relay!.stores.evidence.totals()).count).toBe(0);
  });
});
