// A WmpServer that checks identity assertions (core §5.6): on authenticate (a required policy
// authenticates no session without one), on messages, and never at create.
import { describe, expect, it } from 'vitest';
import {
  type Authenticator,
  type SessionBindingInfo,
  signedChallengeAuthenticator,
  type VerifiedAssertion,
  type WmpServerOptions,
} from '../src/index.js';
import { type AssertionPolicy, sdJwtAssertion, sdJwtAssertionChecker } from '../src/sd-jwt.js';
import { refusal } from './auth-helpers.js';
import { harness } from './helpers.js';
import { didIssuer, holderKey } from './sd-jwt-fixtures.js';

const issuer = didIssuer();

/** Proves whatever `wmp.sender` says, inline at create: a stand-in for bearer or mtls. */
const inline: Authenticator = { needsChallenge: false, authenticate: async ({ sender }) => sender ?? 'anonymous' };

function server(policy: AssertionPolicy = {}, extra: WmpServerOptions = {}) {
  const seen: { identity: string; assertions: readonly VerifiedAssertion[] }[] = [];
  const delivered: (readonly VerifiedAssertion[] | undefined)[] = [];
  const h = harness({
    capabilities: { messaging: {}, relay: { destinations: ['*'] } },
    authenticators: { signed_challenge: signedChallengeAuthenticator(), inline },
    identityAssertions: sdJwtAssertionChecker({
      requiredClaims: ['given_name'],
      trustedIssuers: [issuer.did],
      ...policy,
    }),
    hooks: {
      authenticated: (_session, identity, _connection, assertions) => {
        seen.push({ identity, assertions });
      },
      deliver: (_params, ctx) => {
        delivered.push(ctx.assertions);
        return { ok: true };
      },
    },
    ...extra,
  });
  return { h, seen, delivered };
}

describe('WmpServer with an assertion policy', () => {
  it('authenticates no session without an assertion (-31012 with required_claims); one with it is', async () => {
    const { h, seen } = server();
    const holder = holderKey();
    const credential = await issuer.issue(holder);
    const refused = await refusal(h.open({ keypair: holder.keypair }));
    expect(refused).toMatchObject({
      code: -31012,
      data: { reason: 'insufficient_claims', required_claims: ['given_name'] },
    });
    expect(seen).toEqual([]);
    const bound: SessionBindingInfo[] = [];
    const { session } = await h.open({
      keypair: holder.keypair,
      identityAssertions: async (binding) => {
        bound.push(binding);
        return [
          await sdJwtAssertion(credential, {
            disclose: ['given_name'],
            nonce: binding.challenge,
            audience: binding.sessionId,
            holder,
          }),
        ];
      },
    });
    expect(bound).toEqual([{ sessionId: session.id, challenge: session.challenge }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.identity).toBe(holder.keypair.did);
    expect(seen[0]!.assertions[0]).toMatchObject({ issuer: issuer.did, claims: { given_name: 'Alice' } });
  });

  it('a presentation made for one session is refused in another (invalid_proof)', async () => {
    const { h } = server();
    const holder = holderKey();
    const credential = await issuer.issue(holder);
    let first: unknown;
    await h.open({
      keypair: holder.keypair,
      identityAssertions: async ({ sessionId, challenge }) => {
        first = await sdJwtAssertion(credential, {
          disclose: ['given_name'],
          nonce: challenge,
          audience: sessionId,
          holder,
        });
        return [first];
      },
    });
    const replayed = await refusal(h.open({ keypair: holder.keypair, identityAssertions: () => [first] }));
    expect(replayed).toMatchObject({ code: -31012, data: { reason: 'invalid_proof' } });
  });

  it('checks the assertions a message carries, bound to the session challenge', async () => {
    const { h, delivered } = server({ required: false });
    const holder = holderKey();
    const credential = await issuer.issue(holder);
    const { session } = await h.open({ keypair: holder.keypair, capabilities: { messaging: {}, relay: {} } });
    expect(session.challenge).toBeTypeOf('string');
    const good = await sdJwtAssertion(credential, {
      disclose: ['given_name'],
      nonce: session.challenge!,
      audience: session.id,
      holder,
    });
    const deliver = (assertions: unknown[]) =>
      session.request('wmp.message.deliver', {
        wmp: { identity_assertions: assertions },
        to: ['did:key:zsomeone'],
        content_type: 'text/plain',
        body: 'hi',
      });
    await expect(deliver([good])).resolves.toMatchObject({ ok: true });
    expect(delivered[0]?.[0]).toMatchObject({ claims: { given_name: 'Alice' }, presenter: holder.keypair.did });
    const undisclosed = await sdJwtAssertion(credential, {
      disclose: ['family_name'],
      nonce: session.challenge!,
      audience: session.id,
      holder,
    });
    expect(await refusal(deliver([undisclosed]))).toMatchObject({
      code: -31012,
      data: { reason: 'insufficient_claims' },
    });
    expect(delivered).toHaveLength(1);
    // Without assertions a message is not looked at.
    await expect(session.send(['did:key:zsomeone'], 'plain')).resolves.toMatchObject({ ok: true });
  });

  it('at create: an assertion is refused (nothing to bind it to); a required policy refuses inline authentication', async () => {
    const holder = holderKey();
    const { h } = server();
    const peer = await h.connect();
    const create = (extra: Record<string, unknown>) =>
      peer.request('wmp.session.create', {
        wmp: { version: '0.1', sender: holder.keypair.did, ...extra },
        capabilities_offered: { messaging: {} },
      });
    expect(
      await refusal(
        create({
          identity_assertions: [
            { type: 'verifiable_presentation', format: 'vc+sd-jwt', vp_token: 'x', audience: 'a', nonce: 'n' },
          ],
        }),
      ),
    ).toMatchObject({
      code: -31012,
      data: { reason: 'invalid_proof' },
    });
    const inlineOpen = (o: ReturnType<typeof server>) =>
      o.h.open({ keypair: holder.keypair, auth: { type: 'inline' } as never });
    expect(await refusal(inlineOpen(server()))).toMatchObject({
      code: -31012,
      data: { reason: 'insufficient_claims' },
    });
    // Not required: inline authentication works, and the session has a nonce for later assertions.
    const { session } = await inlineOpen(server({ required: false }));
    expect(session.challenge).toBeTypeOf('string');
  });
});
