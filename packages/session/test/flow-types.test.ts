// The built-in flows (core §6.3, §6.4) at a WmpServer: reviewed or signed by the other
// participant of a group session (its `wmp.flow.action`), or decided by the responder itself
// through its consent callback; the initiator gets the result typed, and a sign flow's proof
// verified.
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import {
  approvalFlow,
  FlowManager,
  type Peer,
  proofSignerOf,
  requestApproval,
  requestSignature,
  type SignRequest,
  signFlow,
  signProof,
  signRequestOf,
  verifyProof,
  WmpSession,
} from '../src/index.js';
import { refusal } from './auth-helpers.js';
import { harness } from './helpers.js';

const CAPS = { messaging: {}, flows: {} };

/** Alice's group session with Bob at `h`'s server, Bob joined; Bob's flow notifications collected. */
async function groupOf(h: ReturnType<typeof harness>) {
  const bob = generateKeypair();
  const alice = await h.open({ participants: [bob.did], capabilities: CAPS });
  const bobPeer: Peer = await h.connect();
  await WmpSession.open(bobPeer, { signer: bob, capabilities: CAPS });
  const joined = (await bobPeer.request('wmp.session.join', {
    wmp: { version: '0.1', sender: bob.did },
    session_id: alice.session.id,
  })) as { capabilities: never; resumption_token: string };
  const bobSession = WmpSession.restore(bobPeer, {
    id: alice.session.id,
    version: '0.1',
    sender: bob.did,
    capabilities: joined.capabilities,
    resumptionToken: joined.resumption_token,
  });
  const seen: { method: string; params: Record<string, any> }[] = [];
  bobSession.on('notification', (n) => seen.push(n));
  return { alice, bob, bobSession, seen };
}

describe('approval', () => {
  it('reviewed by the other participant: awaiting_review names it and says what; approve ends it typed', async () => {
    const h = harness({ capabilities: CAPS });
    const { alice, bob, bobSession, seen } = await groupOf(h);
    const asked = requestApproval(alice.session, { subject: 'Pay invoice 42', body: 'EUR 120' }, { from: bob.did });
    await waitFor(() => seen.some((n) => n.params.step === 'awaiting_review'));
    const progress = seen.find((n) => n.params.step === 'awaiting_review')!.params;
    expect(progress.payload).toMatchObject({ reviewer: bob.did, subject: 'Pay invoice 42', body: 'EUR 120' });
    expect(Date.parse(progress.payload.deadline)).toBeGreaterThan(Date.now());
    // The initiator cannot approve its own request.
    expect(
      await refusal(alice.session.request('wmp.flow.action', { flow_id: progress.flow_id, action: 'approve' })),
    ).toMatchObject({
      code: -31002,
    });
    await bobSession.request('wmp.flow.action', {
      flow_id: progress.flow_id,
      action: 'comment',
      params: { comment: 'checking' },
    });
    await bobSession.request('wmp.flow.action', { flow_id: progress.flow_id, action: 'approve' });
    const result = await asked;
    expect(result).toEqual({ approved: true, approver: bob.did, timestamp: expect.any(String) });
    expect(Object.keys(result).sort()).toEqual(['approved', 'approver', 'timestamp']);
    expect(seen.filter((n) => n.params.step === 'awaiting_review').at(-1)!.params.payload.comment).toMatchObject({
      by: bob.did,
      text: 'checking',
    });

    const refused = requestApproval(alice.session, { subject: 'Again' });
    await waitFor(() => seen.filter((n) => n.params.step === 'awaiting_review').length === 3);
    const second = seen.filter((n) => n.params.step === 'awaiting_review').at(-1)!.params.flow_id;
    await bobSession.request('wmp.flow.action', { flow_id: second, action: 'reject' });
    await expect(refused).resolves.toMatchObject({ approved: false, approver: bob.did });
  });

  it('decided by the responder: its consent callback answers, with itself as approver', async () => {
    const reviewed: unknown[] = [];
    const h = harness({
      capabilities: CAPS,
      flows: new FlowManager({
        types: {
          approval: approvalFlow({
            approver: 'did:key:zResponder',
            review: (review) => {
              reviewed.push(review);
              return { approved: review.request.subject === 'ok', comment: 'seen' };
            },
          }),
        },
      }),
    });
    const { session, keypair } = await h.open({ capabilities: CAPS });
    await expect(requestApproval(session, { subject: 'ok' })).resolves.toMatchObject({
      approved: true,
      approver: 'did:key:zResponder',
    });
    await expect(requestApproval(session, { subject: 'no' })).resolves.toMatchObject({ approved: false });
    expect(reviewed[0]).toMatchObject({ request: { subject: 'ok' }, initiator: keypair.did });
    // From someone else than the approver named: refused as a result.
    await expect(requestApproval(session, { subject: 'ok' }, { from: 'did:key:zOther' })).rejects.toMatchObject({
      code: -31006,
      data: { reason: 'invalid_result' },
    });
  });
});

describe('sign', () => {
  const responderKey = generateKeypair();
  const local = (consent: boolean) =>
    harness({
      capabilities: CAPS,
      flows: new FlowManager({
        types: {
          sign: signFlow({
            consent: () => consent,
            signer: proofSignerOf({ id: responderKey.did, signer: responderKey }),
          }),
        },
      }),
    });

  it('the responder signs each action after consent; the initiator verifies the proof', async () => {
    const { session } = await local(true).open({ capabilities: CAPS });
    const proof = await requestSignature(
      session,
      { action: 'generate_proof', audience: 'https://verifier.example' },
      { signer: responderKey.did },
    );
    expect(proof).toMatchObject({ action: 'generate_proof', signer: responderKey.did, proofType: 'jwt' });
    expect(proof.claims).toMatchObject({
      aud: 'https://verifier.example',
      iss: responderKey.did,
      nonce: expect.stringMatching(/^n-/),
    });
    const doc = await requestSignature(
      session,
      { action: 'sign_document', payload: 'The contract text' },
      { signer: responderKey.did },
    );
    expect(doc.claims).toMatchObject({ aud: session.id, hash_alg: 'sha-256', document_hash: expect.any(String) });
    const auth = await requestSignature(
      session,
      { action: 'authorize', payload: { pay: 120, to: 'IBAN' } },
      { signer: responderKey.did },
    );
    expect(auth.claims.authorization_hash).toBeTypeOf('string');
    // Expecting someone else: the result is refused.
    await expect(
      requestSignature(session, { action: 'generate_proof' }, { signer: generateKeypair().did }),
    ).rejects.toMatchObject({
      code: -31006,
    });
  });

  it('declined: the flow ends with reason rejected', async () => {
    const { session } = await local(false).open({ capabilities: CAPS });
    await expect(
      requestSignature(session, { action: 'generate_proof' }, { signer: responderKey.did }),
    ).rejects.toMatchObject({
      code: -31006,
      data: { reason: 'rejected' },
    });
  });

  it('signed by the other participant: awaiting_signature says what, its proof is checked at submit', async () => {
    const h = harness({ capabilities: CAPS });
    const { alice, bob, bobSession, seen } = await groupOf(h);
    const asked = requestSignature(
      alice.session,
      { action: 'sign_document', payload: { doc: 'v1' } },
      { signer: bob.did },
    );
    await waitFor(() => seen.some((n) => n.params.step === 'awaiting_signature'));
    const { flow_id, payload } = seen.find((n) => n.params.step === 'awaiting_signature')!.params;
    expect(payload).toMatchObject({ signer: bob.did, action: 'sign_document', payload: { doc: 'v1' } });
    const request = signRequestOf(payload);
    const act = (proof: string) =>
      bobSession.request('wmp.flow.action', { flow_id, action: 'submit', params: { proof } });
    // A proof by another key, or over another document: refused, retryable.
    const mallory: Keypair = generateKeypair();
    const forged = await signProof(
      request,
      { id: bob.did, signer: proofSignerOf({ id: mallory.did, signer: mallory }).signer },
      { sessionId: alice.session.id },
    );
    expect(await refusal(act(forged))).toMatchObject({
      code: -31006,
      data: { reason: 'invalid_proof', retryable: true },
    });
    const other: SignRequest = { ...request, payload: { doc: 'v2' } };
    const wrongDoc = await signProof(other, proofSignerOf({ id: bob.did, signer: bob }), {
      sessionId: alice.session.id,
    });
    expect(await refusal(act(wrongDoc))).toMatchObject({ code: -31006, data: { reason: 'invalid_proof' } });
    const good = await signProof(request, proofSignerOf({ id: bob.did, signer: bob }), { sessionId: alice.session.id });
    await act(good);
    const result = await asked;
    expect(result).toMatchObject({ signer: bob.did, proof: good, claims: { document_hash: expect.any(String) } });
  });

  it('verifyProof: each way a proof is wrong has its reason', async () => {
    const request: SignRequest = { action: 'authorize', nonce: 'n-1', payload: { pay: 1 } };
    const signer = proofSignerOf({ id: responderKey.did, signer: responderKey });
    const proof = await signProof(request, signer, { sessionId: 'ses-1' });
    const expected = { signer: responderKey.did, sessionId: 'ses-1' };
    await expect(verifyProof(proof, request, expected)).resolves.toMatchObject({ signer: responderKey.did });
    const reasonOf = async (p: Promise<unknown>) => ((await refusal(p)) as { data: { reason: string } }).data.reason;
    expect(await reasonOf(verifyProof('nope', request, expected))).toBe('malformed');
    expect(await reasonOf(verifyProof(proof, { ...request, action: 'sign_document' }, expected))).toBe('wrong_type');
    expect(await reasonOf(verifyProof(proof, request, { ...expected, signer: generateKeypair().did }))).toBe(
      'wrong_signer',
    );
    expect(await reasonOf(verifyProof(proof, request, { ...expected, sessionId: 'ses-2' }))).toBe('audience_mismatch');
    expect(await reasonOf(verifyProof(proof, { ...request, nonce: 'n-2' }, expected))).toBe('nonce_mismatch');
    expect(await reasonOf(verifyProof(proof, { ...request, payload: { pay: 2 } }, expected))).toBe('hash_mismatch');
    expect(await reasonOf(verifyProof(proof, request, { ...expected, now: Date.now() + 3600_000 }))).toBe('stale');
    const [h, p, s] = proof.split('.');
    const flipped = `${h}.${p}.${s!.startsWith('A') ? `B${s!.slice(1)}` : `A${s!.slice(1)}`}`;
    expect(await reasonOf(verifyProof(flipped, request, expected))).toBe('bad_signature');
  });
});
