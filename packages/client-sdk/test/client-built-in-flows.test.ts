// The built-in approval and sign flows (core §6.3, §6.4) between two WmpClients: directly at a
// WmpServer (a group session: the other participant answers through its consent callbacks) and
// end to end through a real relay (the other party is the responder of the session and decides
// through `onSession`'s consent). The initiator gets `{approved, approver, timestamp}` and a
// verified proof. Through the relay the responder also checks the initiator's SD-JWT VC, and the
// initiator answers the -31012 by disclosing what it asks.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ApprovalReview, type SignConsent, WmpServer } from '@wmp/session';
import { ed25519HolderKey, sdJwtAssertionChecker, sdJwtPresenter } from '@wmp/session/sd-jwt';
import { attachWebSocketServer } from '@wmp/transports/node';
import { afterEach, describe, expect, it } from 'vitest';
import { didIssuer } from '../../session/test/sd-jwt-fixtures.js';
import type { IncomingSession } from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A WmpServer with the built-in flows (a participant reviews and signs), over WebSocket. */
async function flowServer(): Promise<string> {
  const server = new WmpServer({ capabilities: { messaging: {}, flows: { max_concurrent: 8 } } });
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const ws = attachWebSocketServer(http, { path: '/wmp', onTransport: (t) => void server.connect(t) });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  closers.push(async () => {
    await server.close();
    await ws.close();
    await new Promise<void>((r) => http.close(() => r()));
  });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

const approve = (review: ApprovalReview) => ({ approved: review.request.subject === 'Pay invoice 42' });
const signUnlessAuthorize = (consent: SignConsent) => consent.request.action !== 'authorize';

describe('built-in flows directly, in a group session at a WmpServer', () => {
  it('the other participant approves and signs through its consent callbacks; the proof is verified', async () => {
    const url = await flowServer();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    const reviews: ApprovalReview[] = [];
    bob.client.answerFlows({
      approval: (review) => {
        reviews.push(review);
        return approve(review);
      },
      sign: signUnlessAuthorize,
    });
    const group = await alice.client.createGroup([bob.identity.did]);
    await bob.client.joinGroup(group.id);

    const approved = await group.requestApproval(
      { subject: 'Pay invoice 42', body: 'EUR 120' },
      { from: bob.identity.did },
    );
    expect(approved).toEqual({ approved: true, approver: bob.identity.did, timestamp: expect.any(String) });
    expect(reviews[0]).toMatchObject({
      request: { subject: 'Pay invoice 42', body: 'EUR 120' },
      initiator: alice.identity.did,
    });
    await expect(group.requestApproval({ subject: 'Something else' })).resolves.toMatchObject({ approved: false });

    const signed = await group.requestSignature(
      { action: 'sign_document', payload: { contract: 'v1', amount: 120 } },
      { signer: bob.identity.did },
    );
    expect(signed).toMatchObject({ action: 'sign_document', signer: bob.identity.did, proofType: 'jwt' });
    expect(signed.claims).toMatchObject({ iss: bob.identity.did, aud: group.id, document_hash: expect.any(String) });
    await expect(
      group.requestSignature({ action: 'authorize', payload: { pay: 120 } }, { signer: bob.identity.did }),
    ).rejects.toMatchObject({ code: -31006, data: { reason: 'rejected' } });
  });
});

describe('built-in flows end to end through a relay', () => {
  it('Bob answers as responder; Alice presents an SD-JWT VC, retrying with what Bob asks', async () => {
    const { url } = await bed.relay();
    const issuer = didIssuer();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    const incoming: IncomingSession[] = [];
    await bob.client.onSession((s) => incoming.push(s), {
      consent: { approval: approve, sign: signUnlessAuthorize },
      identityAssertions: sdJwtAssertionChecker({ requiredClaims: ['given_name'], trustedIssuers: [issuer.did] }),
    });

    // Alice's credential, bound to her key; she first discloses only family_name.
    const holder = ed25519HolderKey(alice.identity.keypair);
    const credential = await issuer.issue(holder);
    const refusals: string[] = [];
    const presenter = sdJwtPresenter({
      holder,
      credentials: [credential],
      disclose: ['family_name'],
      allowRetry: (refused) => {
        refusals.push(`${refused.reason}:${refused.requiredClaims.join(',')}`);
        return true;
      },
    });
    const session = await alice.client.openSession(bob.identity.did, { present: presenter });
    expect(session.relayHosted).toBe(false);
    expect(refusals).toEqual(['insufficient_claims:given_name']);
    await waitFor(() => incoming.length === 1);
    expect(incoming[0]!.assertions[0]).toMatchObject({
      issuer: issuer.did,
      claims: { given_name: 'Alice', family_name: 'Example' },
      presenter: alice.identity.did,
    });

    await expect(session.requestApproval({ subject: 'Pay invoice 42' })).resolves.toMatchObject({
      approved: true,
      approver: bob.identity.did,
    });
    const proof = await session.requestSignature({ action: 'generate_proof', audience: 'https://verifier.example' });
    expect(proof.claims).toMatchObject({ iss: bob.identity.did, aud: 'https://verifier.example' });
    await expect(session.requestSignature({ action: 'authorize', payload: { pay: 1 } })).rejects.toMatchObject({
      code: -31006,
      data: { reason: 'rejected' },
    });
    // resolve `endpoint` for Bob himself: where he is reached.
    await expect(session.resolve(bob.identity.did, 'endpoint')).resolves.toMatchObject({
      metadata: { supported_versions: ['0.1'], relay: expect.stringContaining('/wmp') },
    });
  });

  it('without the application allowing it, the refusal stands; without consent callbacks the flows are not offered', async () => {
    const { url } = await bed.relay();
    const issuer = didIssuer();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    await bob.client.onSession(() => undefined, {
      identityAssertions: sdJwtAssertionChecker({ requiredClaims: ['given_name'], trustedIssuers: [issuer.did] }),
    });
    const holder = ed25519HolderKey(alice.identity.keypair);
    const credential = await issuer.issue(holder);
    const refusing = sdJwtPresenter({ holder, credentials: [credential], disclose: ['family_name'] });
    await expect(alice.client.openSession(bob.identity.did, { present: refusing })).rejects.toMatchObject({
      code: -31012,
      data: { reason: 'insufficient_claims', required_claims: ['given_name'] },
    });
    const session = await alice.client.openSession(bob.identity.did, {
      present: sdJwtPresenter({ holder, credentials: [credential], disclose: ['given_name'] }),
    });
    // An unknown flow type is refused as a capability not negotiated.
    await expect(session.requestApproval({ subject: 'x' })).rejects.toMatchObject({
      code: -31005,
      data: { capability: 'approval' },
    });
  });
});
