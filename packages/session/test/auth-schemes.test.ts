import { generateKeypair, signChallenge } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { challengePayload } from '../src/auth/challenge.js';
import { signJws } from '../src/auth/jws.js';
import {
  AUTH_FAILURE_REASONS,
  type Authenticator,
  acceptedSchemes,
  bearerAuthenticator,
  checkSenderScheme,
  schemeCovers,
  schemeFamilies,
  schemeOf,
  signedChallengeAuthenticator,
} from '../src/index.js';
import { x5cAuthenticator } from '../src/x509.js';
import { createAs, nowRfc3339, refusal, signerOf } from './auth-helpers.js';
import { harness } from './helpers.js';
import { issue, newKey } from './pki.js';

describe('identifier schemes (core §7.1)', () => {
  it('infers the scheme from the prefix', () => {
    expect(schemeOf('did:key:z6Mk')).toBe('did:key');
    expect(schemeOf('did:web:example.com:alice')).toBe('did:web');
    expect(schemeOf('x509:san:dns:a.example')).toBe('x509:san:dns');
    expect(schemeOf('x509:san:uri:https://a.example/x')).toBe('x509:san:uri');
    expect(schemeOf('x509:sha256:ab')).toBe('x509:sha256');
    expect(schemeOf('x509:dn:CN=a')).toBe('x509:dn');
    expect(schemeOf('https://a.example')).toBe('uri');
    expect(schemeOf('urn:ietf:x')).toBe('urn');
    expect(schemeOf('ebcore:iso6523:0088:1')).toBe('ebcore');
    expect(schemeOf('mdoc:issuer:x')).toBe('mdoc');
    expect(schemeOf('did:')).toBe('opaque');
    expect(schemeOf('alice')).toBe('opaque');
    expect(schemeOf('http://a.example')).toBe('opaque');
  });

  it('reads coarse and precise scheme names alike', () => {
    expect(schemeCovers('did', 'did:web:a.example')).toBe(true);
    expect(schemeCovers('did:key', 'did:web:a.example')).toBe(false);
    expect(schemeCovers('x509', 'x509:sha256:ab')).toBe(true);
    expect(schemeCovers('x509:san', 'x509:san:dns:a')).toBe(true);
    expect(schemeCovers('x509:san', 'x509:sha256:ab')).toBe(false);
    expect(schemeCovers('uri', 'https://a.example')).toBe(true);
    expect(schemeCovers('did:k', 'did:key:z6Mk')).toBe(false);
  });

  it('computes accepted_schemes from exactly the configured authenticators', async () => {
    const root = await issue({ subject: 'r', key: newKey('p256'), ca: true });
    const custom: Authenticator = { needsChallenge: false, authenticate: async () => 'x' };
    expect(acceptedSchemes({ signed_challenge: signedChallengeAuthenticator() })).toEqual(['did:jwk', 'did:key']);
    expect(
      acceptedSchemes({
        x5c: x5cAuthenticator({ trustAnchors: root.pem, schemes: ['x509:san:dns'] }),
        bearer: bearerAuthenticator({
          key: new Uint8Array(32),
          issuer: 'i',
          audience: 'a',
          schemes: ['uri', 'opaque'],
        }),
        custom,
      }),
    ).toEqual(['opaque', 'uri', 'x509:san:dns']);
    expect(acceptedSchemes(new Map([['custom', custom]]))).toEqual([]);
  });

  it('names the families of schemes as the spec writes them', () => {
    expect(schemeFamilies(['did:jwk', 'did:key', 'uri', 'x509:san:dns', 'x509:sha256'])).toEqual([
      'did',
      'uri',
      'x509',
    ]);
    expect(schemeFamilies([])).toEqual([]);
  });

  it('checks a sender against every authenticator, or against the one its auth type names', () => {
    const authenticators = {
      signed_challenge: signedChallengeAuthenticator(),
      bearer: bearerAuthenticator({ key: new Uint8Array(32), issuer: 'i', audience: 'a', schemes: ['uri'] }),
    };
    expect(() => checkSenderScheme(authenticators, 'https://wallet.example')).not.toThrow();
    expect(() => checkSenderScheme(authenticators, 'https://wallet.example', 'signed_challenge')).toThrow(
      expect.objectContaining({ code: -31002, data: { reason: 'unsupported_scheme' } }),
    );
    expect(() => checkSenderScheme(authenticators, 'did:web:a.example')).toThrow(
      expect.objectContaining({ data: { reason: 'unsupported_scheme' } }),
    );
    expect(() => checkSenderScheme(authenticators, undefined)).not.toThrow();
    // A custom authenticator without declared schemes accepts any sender.
    const open: Authenticator = { needsChallenge: false, authenticate: async () => 'x' };
    expect(() => checkSenderScheme({ open }, 'did:web:a.example')).not.toThrow();
  });

  it('lists the refusal reasons', () => {
    expect(AUTH_FAILURE_REASONS).toEqual([
      'untrusted_chain',
      'expired',
      'not_yet_valid',
      'san_mismatch',
      'fingerprint_mismatch',
      'bad_signature',
      'unsupported_scheme',
      'unsupported_algorithm',
      'did_resolution_failed',
      'dpop_invalid',
      'dpop_replay',
    ]);
  });
});

describe('signed_challenge refusals', () => {
  async function authenticateWith(
    sender: string,
    signature: (c: { challenge: string; sessionId: string; timestamp: string }) => Promise<string>,
  ) {
    const h = harness();
    const peer = await h.connect();
    const round = await createAs(peer, sender);
    const timestamp = nowRfc3339();
    return refusal(
      peer.request('wmp.session.authenticate', {
        wmp: { version: '0.1', session_id: round.sessionId, sender },
        auth: {
          type: 'signed_challenge',
          challenge: round.challenge,
          timestamp,
          signature: await signature({ ...round, timestamp }),
        },
      }),
    );
  }

  it('names a wrong key, a key of another DID, a foreign algorithm and an unresolvable did:key', async () => {
    const alice = generateKeypair();
    const mallory = generateKeypair();
    const claims = (c: { challenge: string; sessionId: string; timestamp: string }, sender = alice.did) => ({
      challenge: c.challenge,
      session_id: c.sessionId,
      sender,
      timestamp: c.timestamp,
    });
    expect(await authenticateWith(alice.did, (c) => signChallenge(claims(c), alice))).toBe('ok');
    expect(await authenticateWith(alice.did, (c) => signChallenge(claims(c), { ...mallory, kid: alice.kid }))).toEqual({
      code: -31002,
      data: { reason: 'bad_signature' },
    });
    expect(await authenticateWith(alice.did, (c) => signChallenge(claims(c), mallory))).toEqual({
      code: -31002,
      data: { reason: 'bad_signature', detail: 'kid' },
    });
    const p256 = newKey('p256');
    expect(
      await authenticateWith(alice.did, async (c) =>
        signJws(challengePayload({ ...c, sender: alice.did }), { ...(await signerOf(p256, 'ES256')), kid: alice.kid }),
      ),
    ).toEqual({ code: -31002, data: { reason: 'unsupported_algorithm' } });
    expect(await authenticateWith(alice.did, async () => 'not-a-jws')).toEqual({
      code: -31002,
      data: { reason: 'bad_signature', detail: 'malformed' },
    });
    const broken = 'did:key:z6MkBROKEN';
    expect(
      await authenticateWith(broken, (c) => signChallenge(claims(c, broken), { ...alice, kid: `${broken}#x` })),
    ).toEqual({
      code: -31002,
      data: { reason: 'did_resolution_failed', detail: 'unknown_key' },
    });
  });
});
