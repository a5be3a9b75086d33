import { generateKeypair, verifyEvidence } from '@wmp/jcs-signing';
import { signRequest } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import {
  collectEvidence,
  EVIDENCE_CAPABILITIES,
  getSigned,
  signedSend,
  typesOf,
} from '../../../test-support/evidence-clients.js';
import { relayTestbed, waitFor } from './fixtures/relay-clients.js';

// The evidence repository over HTTP (wmp-tables §9), the records the sweeper and refusals give
// rise to, retention, and the recorder other steps call: a real relay on a real port.
const testbed = relayTestbed();

/** Alice (under evidence) sends Bob one message he receives and acknowledges: four records. */
async function oneMessage(url: string) {
  const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
  const bob = await testbed.open(url);
  const notifies = collectEvidence(alice);
  const sent = await signedSend(alice, [bob.keypair.did], { n: 1 });
  await waitFor(() => bob.inbox.length === 1);
  await bob.session.notify('wmp.message.ack', { message_ids: [sent.message_id], status: 'received' });
  await waitFor(() => notifies.length === 4);
  return { alice, bob, notifies, messageId: sent.message_id as string };
}

describe('GET /evidence', () => {
  it('serves a message to its parties only: the sender all, a recipient what is about it, no one else', async () => {
    const url = await testbed.setup();
    const { alice, bob, notifies, messageId } = await oneMessage(url);
    const path = `/evidence?message_id=${messageId}`;

    const mine = await getSigned(url, alice.keypair, path);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('cache-control')).toBe('no-store');
    expect(mine.body.total_count).toBe(4);
    expect(mine.body.continuation_token).toBeUndefined();
    const records = mine.body.evidence_records as Record<string, any>[];
    expect(records.map((r) => r.event_type)).toEqual(typesOf(notifies));
    // Each served record is its fields, its JWS and (with a TSA) its token: it verifies as served.
    for (const { signed_evidence, timestamp_token: _t, ...record } of records) {
      await expect(verifyEvidence(record, signed_evidence, { issuer: testbed.relay!.id })).resolves.toBeDefined();
    }
    expect(records[0]).toEqual({ ...notifies[0]!.evidence, signed_evidence: notifies[0]!.signed_evidence });

    // Bob is a party of the submission (every recipient is) and of the records about him.
    expect((await getSigned(url, bob.keypair, path)).body.total_count).toBe(4);
    // Mallory signs correctly and is no party: an empty list, and the same answer as for an unknown record.
    const mallory = generateKeypair();
    expect((await getSigned(url, mallory, path)).body).toEqual({ evidence_records: [], total_count: 0 });
    const id = records[1]!.evidence_id as string;
    const one = await getSigned(url, bob.keypair, `/evidence/${id}`);
    expect(one.status).toBe(200);
    expect(one.body.evidence_records[0].evidence_id).toBe(id);
    for (const [who, target] of [
      [mallory, `/evidence/${id}`],
      [alice.keypair, '/evidence/ev-unknown'],
    ] as const) {
      const refused = await getSigned(url, who, target);
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual({
        error: { code: -31009, message: 'Evidence required', data: { reason: 'not_found' } },
      });
    }
  });

  it('pages a session within a time range', async () => {
    const url = await testbed.setup();
    const { alice, notifies } = await oneMessage(url);
    const session = alice.session.id;
    const first = await getSigned(url, alice.keypair, `/evidence?session_id=${session}&limit=3`);
    expect(first.body.total_count).toBe(4);
    expect(first.body.evidence_records).toHaveLength(3);
    const token = first.body.continuation_token as string;
    const rest = await getSigned(
      url,
      alice.keypair,
      `/evidence?session_id=${session}&limit=3&continuation_token=${token}`,
    );
    expect(rest.body.evidence_records.map((r: { evidence_id: string }) => r.evidence_id)).toEqual([
      notifies[3]!.evidence.evidence_id,
    ]);
    expect(rest.body.continuation_token).toBeUndefined();
    const later = new Date(Date.now() + 60_000).toISOString();
    const none = await getSigned(url, alice.keypair, `/evidence?session_id=${session}&since=${later}`);
    expect(none.body.total_count).toBe(0);
    const until = await getSigned(url, alice.keypair, `/evidence?session_id=${session}&until=${later}`);
    expect(until.body.total_count).toBe(4);
  });

  it('refuses an unsigned, a replayed, a foreign or a stale request with 401 -31002, a bad query with 400 -32602', async () => {
    const url = await testbed.setup();
    const { alice, messageId } = await oneMessage(url);
    const path = `/evidence?message_id=${messageId}`;
    const unauthorized = { error: { code: -31002, message: 'Not authorized', data: { reason: 'request_signature' } } };
    const unsigned = await getSigned(url, undefined, path);
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers.get('www-authenticate')).toBe('OHAN-Sig');
    expect(unsigned.body).toEqual(unauthorized);
    const header = await signRequest({ signer: alice.keypair, origin: url, method: 'GET', target: path });
    expect((await getSigned(url, undefined, path, header)).status).toBe(200);
    const replayed = await getSigned(url, undefined, path, header);
    expect(replayed.status).toBe(401);
    expect(replayed.body).toEqual(unauthorized);
    const cases = [
      // Signed for another origin, another target, or too long ago.
      await signRequest({ signer: alice.keypair, origin: 'https://other.example', method: 'GET', target: path }),
      await signRequest({ signer: alice.keypair, origin: url, method: 'GET', target: '/evidence?message_id=x' }),
      await signRequest({
        signer: alice.keypair,
        origin: url,
        method: 'GET',
        target: path,
        ts: new Date(Date.now() - 3_600_000),
      }),
    ];
    for (const h of cases) expect((await getSigned(url, undefined, path, h)).body).toEqual(unauthorized);
    const queries = [
      '/evidence',
      `/evidence?message_id=${messageId}&session_id=ses-x`,
      '/evidence?message_id=bad%20id',
      '/evidence?session_id=ses-x&since=yesterday',
      `/evidence?message_id=${messageId}&limit=101`,
      `/evidence?message_id=${messageId}&continuation_token=abc`,
      `/evidence?message_id=${messageId}&colour=blue`,
    ];
    for (const q of queries) {
      const bad = await getSigned(url, alice.keypair, q);
      expect(bad.status, q).toBe(400);
      expect(bad.body, q).toEqual({ error: { code: -32602, message: 'Invalid params', data: { reason: 'query' } } });
    }
    expect((await getSigned(url, alice.keypair, path)).status).toBe(200);
  });
});

describe('records the sweeper and refusals give rise to', () => {
  it('delivery_failed for a queue that is full for the sender', async () => {
    const url = await testbed.setup({ limits: { maxQueued: 100, maxQueuedPerSender: 1 } });
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url, { register: false });
    const carol = await testbed.open(url);
    collectEvidence(alice);
    await signedSend(alice, [bob.keypair.did], 'one');
    // Bob's queue holds one of Alice's messages already: the next to Bob and Carol is dropped for Bob.
    const second = await signedSend(alice, [bob.keypair.did, carol.keypair.did], 'two');
    await waitFor(() => carol.inbox.length === 1);
    const store = testbed.relay!.stores.evidence;
    const failedFor = async () =>
      (await store.find({ messageId: second.message_id }, bob.keypair.did, undefined, 100)).entries.find(
        (e) => e.eventType === 'delivery_failed',
      );
    await waitFor(async () => (await failedFor()) !== undefined);
    expect(JSON.parse((await failedFor())!.body).evidence).toMatchObject({
      original_recipient: bob.keypair.did,
      event_reason: { code: 'quota_exceeded', details: { reason: 'sender_share' } },
    });
  });

  it('delivery_expired for a message never delivered, retrieval_timeout for one delivered and never acknowledged', async () => {
    const url = await testbed.setup();
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url, { register: false });
    const carol = await testbed.open(url);
    const notifies = collectEvidence(alice);
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const sent = await signedSend(alice, [bob.keypair.did, carol.keypair.did], 'soon', {}, { expires_at: expiresAt });
    await waitFor(() => carol.inbox.length === 1); // Carol has it and never acknowledges it
    await waitFor(() => typesOf(notifies).includes('content_handover'));
    await expect
      .poll(
        async () => {
          await testbed.relay!.core.sweeper.run();
          return notifies.filter((n) => n.evidence.original_message_id === sent.message_id).length;
        },
        { timeout: 15_000, interval: 300 },
      )
      .toBe(5);
    const byRecipient = (type: string) =>
      notifies.find((n) => n.evidence.event_type === type)?.evidence.original_recipient;
    expect(byRecipient('delivery_expired')).toBe(bob.keypair.did);
    expect(byRecipient('retrieval_timeout')).toBe(carol.keypair.did);
    expect(byRecipient('delivery_confirmed')).toBe(carol.keypair.did);
  });

  it('the consignment and acceptance steps record through the recorder; none for a message under no evidence', async () => {
    const url = await testbed.setup();
    const { alice, bob, notifies, messageId } = await oneMessage(url);
    const recorder = testbed.relay!.core.evidence;
    const id = await recorder.record(
      'acceptance_confirmed',
      { messageId, sender: alice.keypair.did, recipient: bob.keypair.did },
      { details: { signed_receipt: 'eyJ..sig' } },
    );
    expect(id).toMatch(/^ev-/);
    await waitFor(() => notifies.length === 5);
    expect(notifies[4]!.evidence).toMatchObject({
      evidence_id: id,
      event_type: 'acceptance_confirmed',
      original_recipient: bob.keypair.did,
      details: { signed_receipt: 'eyJ..sig' },
      previous_evidence_id: notifies[0]!.evidence.evidence_id,
    });
    expect(await recorder.record('acceptance_rejected', { messageId: 'msg-none', sender: alice.keypair.did })).toBe(
      undefined,
    );
    expect(await recorder.record('acceptance_rejected', { messageId, sender: bob.keypair.did })).toBeUndefined();
  });
});

describe('retention', () => {
  it('keeps records for the retention period; the sweeper removes them after it', async () => {
    const url = await testbed.setup({ evidence: { retention: 'PT2S' } });
    expect(testbed.relay!.core.evidenceConfig.retention.text).toBe('PT2S');
    const { alice, messageId } = await oneMessage(url);
    const doc = (await (await fetch(`${url}/.well-known/wmp-configuration`)).json()) as Record<string, any>;
    expect(doc.capabilities.evidence).toMatchObject({ retention_period: 'PT2S', repository: `${url}/evidence` });
    expect((await getSigned(url, alice.keypair, `/evidence?message_id=${messageId}`)).body.total_count).toBe(4);
    await expect
      .poll(
        async () => {
          await testbed.relay!.core.sweeper.run();
          return (await testbed.relay!.stores.evidence.totals()).count;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe(0);
    expect((await getSigned(url, alice.keypair, `/evidence?message_id=${messageId}`)).body.total_count).toBe(0);
  });

  it('refuses a retention that is no ISO 8601 duration', async () => {
    await expect(testbed.setup({ evidence: { retention: '5 years' } })).rejects.toThrow(/ISO 8601 duration/);
  });
});
