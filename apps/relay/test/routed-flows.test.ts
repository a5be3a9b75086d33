// Two WmpClients through a real wmp-relay process started with --assertion-policy: each presents
// its SD-JWT VC when it opens its session at the relay (the client's `present`), then Alice opens
// a session end to end to Bob, who answers the built-in approval and sign flows through his
// consent callbacks; Alice gets the approval and Bob's proof, verified.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, Identity, type WmpClient } from '@wmp/client-sdk/node';
import { ed25519HolderKey, sdJwtPresenter } from '@wmp/session/sd-jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DidIssuer, didIssuer } from '../../../packages/session/test/sd-jwt-fixtures.js';
import { type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';

let dir: string;
let relay: RelayProcess;
let issuer: DidIssuer;
const clients: WmpClient[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wmp-relay-flows-'));
  issuer = didIssuer();
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({ required_claims: ['given_name'], trusted_issuers: [issuer.did] }));
  relay = await startRelayProcess(['--ephemeral', '--port', '0', '--assertion-policy', policy], { timeoutMs: 60_000 });
}, 90_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  relay?.child.kill('SIGTERM');
  await relay?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** A client whose session at the relay presents its credential (given_name disclosed). */
async function client(): Promise<{ client: WmpClient; identity: Identity }> {
  const identity = Identity.generate();
  const holder = ed25519HolderKey(identity.keypair);
  const credential = await issuer.issue(holder);
  const c = await connect(`${relay.url.replace(/^http/, 'ws')}/wmp`, {
    identity,
    reconnect: false,
    present: sdJwtPresenter({ holder, credentials: [credential], disclose: ['given_name'] }),
  });
  clients.push(c);
  return { client: c, identity };
}

describe('built-in flows through wmp-relay', () => {
  it('approval and sign complete end to end; the proof is verified', async () => {
    const alice = await client();
    const bob = await client();
    await bob.client.onSession(() => undefined, {
      consent: {
        approval: (review) => ({ approved: review.request.subject === 'Pay invoice 42' }),
        sign: () => true,
      },
    });
    const session = await alice.client.openSession(bob.identity.did, { whenHosted: 'refuse' });
    await expect(session.requestApproval({ subject: 'Pay invoice 42' })).resolves.toEqual({
      approved: true,
      approver: bob.identity.did,
      timestamp: expect.any(String),
    });
    const proof = await session.requestSignature({ action: 'sign_document', payload: 'The contract, v3' });
    expect(proof).toMatchObject({ signer: bob.identity.did, action: 'sign_document' });
    expect(proof.claims).toMatchObject({ aud: session.id, document_hash: expect.any(String) });
  });
});
