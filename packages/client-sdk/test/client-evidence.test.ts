// The evidence profile (wmp-tables §9) as the SDK exposes it, through a real relay on a real port:
// `onEvidence` hands over the records the relay sends about a client's messages (checked, once,
// acknowledged after the listener), and `evidence()` reads the relay's repository with a signed
// request.
import { generateKeypair, signEvidence, verifyEvidence } from '@wmp/jcs-signing';
import { EVIDENCE_EVENT_TYPES, WmpError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import { checkEvidence } from '../src/client/proofs/evidence-checks.js';
import { MessageChecks } from '../src/client/proofs/message-checks.js';
import { DEFAULT_CLIENT_CAPABILITIES, type ReceivedEvidence, WmpClientError } from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();
const UNDER_EVIDENCE = { ...DEFAULT_CLIENT_CAPABILITIES, evidence: { event_types: [...EVIDENCE_EVENT_TYPES] } };
const ONE_RELAY_TYPES = ['submission_accepted', 'delivery_confirmed', 'content_handover', 'retrieval_confirmed'];

describe('evidence on the client', () => {
  it('onEvidence gets each record of a sent message, checked; evidence() reads them back for each party', async () => {
    const { url, relay } = await bed.relay();
    const alice = await bed.client(url, { capabilities: UNDER_EVIDENCE });
    const bob = await bed.client(url);
    const got: ReceivedEvidence[] = [];
    alice.client.onEvidence((e) => {
      got.push(e);
    });
    const sent = await alice.client.send(bob.identity.did, { contract: 'C-1' });
    // Bob's client acknowledges what it had: the relay records the retrieval too.
    await waitFor(() => got.length === 4);
    expect(got.map((e) => e.eventType).sort()).toEqual([...ONE_RELAY_TYPES].sort());
    for (const e of got) {
      expect(e).toMatchObject({
        messageId: sent.messageId,
        sender: alice.identity.did,
        issuer: relay.id,
        signature: { valid: true },
        timestamp: undefined,
      });
      await expect(verifyEvidence(e.record, e.signedEvidence)).resolves.toMatchObject({ issuer: relay.id });
    }
    // Acknowledged: nothing of the relay's stays in Alice's queue.
    await waitFor(async () => (await relay.stores.queue.stats(alice.identity.did)).count === 0);

    const mine = await alice.client.evidence({ messageId: sent.messageId! });
    expect(mine.totalCount).toBe(4);
    expect(mine.continuationToken).toBeUndefined();
    expect(mine.records.map((r) => r.id).sort()).toEqual(got.map((e) => e.id).sort());
    expect(mine.records.every((r) => r.signature.valid)).toBe(true);
    // A page at a time.
    const first = await alice.client.evidence({ messageId: sent.messageId!, limit: 3 });
    expect(first.records).toHaveLength(3);
    const rest = await alice.client.evidence({
      messageId: sent.messageId!,
      limit: 3,
      continuationToken: first.continuationToken!,
    });
    expect(rest.records).toHaveLength(1);
    // Bob, a party of the message, reads its submission and the records about his delivery; a
    // stranger gets nothing (the same answer as for a message that does not exist).
    const bobs = await bob.client.evidence({ messageId: sent.messageId! });
    expect(bobs.totalCount).toBe(4);
    const aboutBob = bobs.records.filter((r) => r.recipient !== undefined);
    expect(aboutBob.map((r) => r.recipient)).toEqual(Array(3).fill(bob.identity.did));
    const stranger = await bed.client(url);
    expect(await stranger.client.evidence({ messageId: sent.messageId! })).toEqual({
      records: [],
      totalCount: 0,
      continuationToken: undefined,
    });
    // A page token the relay cannot read is its refusal, as a WmpError.
    const refused = await alice.client
      .evidence({ messageId: sent.messageId!, continuationToken: 'not-a-token' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WmpError);
    expect(refused).toMatchObject({ code: -32602, data: { reason: 'query' } });
  });

  it('keeps records while nobody listens, then hands each over once and acknowledges it', async () => {
    const { url, relay } = await bed.relay();
    const alice = await bed.client(url, { capabilities: UNDER_EVIDENCE });
    const bob = await bed.client(url);
    await alice.client.send(bob.identity.did, 'first');
    // No listener yet: the notifications stay in Alice's queue at the relay, unacknowledged.
    await waitFor(async () => (await relay.stores.queue.stats(alice.identity.did)).count === 4);
    const got: ReceivedEvidence[] = [];
    const off = alice.client.onEvidence((e) => {
      got.push(e);
    });
    await waitFor(() => got.length === 4);
    await waitFor(async () => (await relay.stores.queue.stats(alice.identity.did)).count === 0);
    expect(new Set(got.map((e) => e.id)).size).toBe(4);
    off();
  });

  it('reports a record whose signature does not hold, and refuses a query that names no message or session', async () => {
    const relayKey = generateKeypair();
    const record = {
      evidence_id: 'evd-1',
      event_type: 'delivery_confirmed',
      original_message_id: 'msg-1',
      evidence_issuer: { id: relayKey.did },
    };
    const signed = await signEvidence(record, relayKey);
    const checks = new MessageChecks();
    const fine = await checkEvidence({ evidence: record, signed_evidence: signed }, checks);
    expect(fine).toMatchObject({ id: 'evd-1', issuer: relayKey.did, signature: { valid: true } });
    const changed = await checkEvidence(
      { evidence: { ...record, event_type: 'delivery_failed' }, signed_evidence: signed },
      checks,
    );
    expect(changed.signature).toEqual({ valid: false, reason: 'signature' });
    const token = await checkEvidence({ evidence: record, signed_evidence: signed, timestamp_token: 'AAAA' }, checks);
    expect(token.timestamp).toEqual({ time: undefined, valid: false, reason: 'no_anchors' });

    const { url } = await bed.relay();
    const alice = await bed.client(url, { capabilities: UNDER_EVIDENCE });
    for (const query of [{}, { messageId: 'm', sessionId: 's' }, { messageId: 'm', since: new Date() }]) {
      const error = await alice.client.evidence(query).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WmpClientError);
      expect(error).toMatchObject({ code: 'ERR_CLIENT_EVIDENCE_QUERY' });
    }
  });
});
