// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { generateKeypair } from '@wmp/jcs-signing';
import {
  approvalFlow,
  FlowManager,
  InMemoryTransport,
  openPresenting,
  Peer,
  proofSignerOf,
  requestApproval,
  requestSignature,
  signFlow,
  WmpServer,
  WmpSession,
} from '@wmp/session';
import { ed25519HolderKey, issueSdJwtVc, sdJwtAssertionChecker, sdJwtPresenter } from '@wmp/session/sd-jwt';

// An issuer (a did:key here), and Alice's credential bound to her key.
const issuer = generateKeypair();
const alice = generateKeypair();
const holder = ed25519HolderKey(alice);
const credential = await issueSdJwtVc({
  issuer: issuer.did,
  vct: 'https://credentials.example.com/identity',
  claims: { given_name: 'Alice', family_name: 'Example' },
  disclosable: ['given_name', 'family_name'],
  holder: holder.publicJwk,
  signer: { alg: 'EdDSA', kid: issuer.kid, sign: (data) => issuer.sign(data) },
  expiresAt: Date.now() + 3600_000,
});

// Bob's responder: it wants given_name from that issuer, and runs the built-in flows itself.
const bob = generateKeypair();
const server = new WmpServer({
  capabilities: { messaging: {}, flows: {} },
  identityAssertions: sdJwtAssertionChecker({ requiredClaims: ['given_name'], trustedIssuers: [issuer.did] }),
  flows: new FlowManager({
    types: {
      approval: approvalFlow({ approver: bob.did, review: (r) => ({ approved: r.request.subject === 'Lunch?' }) }),
      sign: signFlow({ consent: () => true, signer: proofSignerOf({ id: bob.did, signer: bob }) }),
    },
  }),
  hooks: {
    authenticated: (_session, who, _connection, assertions) =>
      console.log(`${who === alice.did ? 'alice' : who} presented given_name=${assertions[0]?.claims.given_name}`),
  },
});
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const peer = new Peer(clientSide);
await peer.start();

// Alice discloses family_name only; refused, she allows disclosing what is asked and retries.
const presenter = sdJwtPresenter({
  holder,
  credentials: [credential],
  disclose: ['family_name'],
  allowRetry: (refused) => {
    console.log(`refused: ${refused.reason}, asked for ${refused.requiredClaims.join(', ')}`);
    return true;
  },
});
const session = await openPresenting(
  (identityAssertions) =>
    WmpSession.open(peer, { signer: alice, capabilities: { messaging: {}, flows: {} }, identityAssertions }),
  presenter,
);

const approval = await requestApproval(session, { subject: 'Lunch?' }, { from: bob.did });
console.log(`approved: ${approval.approved} by ${approval.approver === bob.did ? 'bob' : approval.approver}`);
const proof = await requestSignature(
  session,
  { action: 'sign_document', payload: 'I owe Bob a lunch' },
  { signer: bob.did },
);
console.log(`signed by ${proof.signer === bob.did ? 'bob' : proof.signer}, verified, hash ${proof.claims.hash_alg}`);
await peer.close();
