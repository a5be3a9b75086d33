import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  bearerAuthenticator,
  dpopAuthenticator,
  MemoryReplayCache,
  signedChallengeAuthenticator,
} from '../src/index.js';
import { refusal } from './auth-helpers.js';
import { type Harness, harness } from './helpers.js';

const ISSUER = 'https://issuer.example';
const AUDIENCE = 'https://relay.example';
const HTU = 'wss://relay.example/wmp';
const SUB = 'https://wallet.example/alice';

const issuerKeys = await generateKeyPair('ES256');
const holderKeys = await generateKeyPair('ES256', { extractable: true });
const holderJwk = await exportJWK(holderKeys.publicKey);
const jkt = await calculateJwkThumbprint(holderJwk);

async function accessToken(o: { cnf?: unknown; sub?: string } = {}): Promise<string> {
  return new SignJWT({ ...(o.cnf === undefined ? { cnf: { jkt } } : o.cnf === null ? {} : { cnf: o.cnf }) })
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(o.sub ?? SUB)
    .setExpirationTime('5m')
    .sign(issuerKeys.privateKey);
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
let jtiCounter = 0;

async function proof(
  token: string,
  o: {
    htm?: string;
    htu?: string;
    iat?: number;
    jti?: string;
    ath?: string | null;
    typ?: string;
    jwk?: JWK;
    key?: CryptoKey;
  } = {},
): Promise<string> {
  const claims: Record<string, unknown> = {
    htm: o.htm ?? 'POST',
    htu: o.htu ?? HTU,
    iat: o.iat ?? Math.floor(Date.now() / 1000),
    jti: o.jti ?? `jti-${jtiCounter++}`,
  };
  if (o.ath !== null) claims.ath = o.ath ?? ath(token);
  return new SignJWT(claims)
    .setProtectedHeader({ typ: o.typ ?? 'dpop+jwt', alg: 'ES256', jwk: o.jwk ?? holderJwk })
    .sign(o.key ?? holderKeys.privateKey);
}

function server(replayCache = new MemoryReplayCache()) {
  const common = { key: issuerKeys.publicKey, issuer: ISSUER, audience: AUDIENCE, schemes: ['uri'] };
  return harness({
    authenticators: {
      signed_challenge: signedChallengeAuthenticator(),
      bearer: bearerAuthenticator(common),
      dpop: dpopAuthenticator({ ...common, htu: [HTU, 'https://relay.example/wmp'], replayCache }),
    },
  });
}

async function create(h: Harness, auth: Record<string, unknown>, sender = SUB) {
  const peer = await h.connect();
  return refusal(peer.request('wmp.session.create', { wmp: { version: '0.1', sender }, auth }));
}

const refused = (reason: string, detail?: string) => ({
  code: -31002,
  data: detail === undefined ? { reason } : { reason, detail },
});

describe('DPoP-bound bearer tokens (RFC 9449)', () => {
  it('accepts a token with its proof inline at create, for either configured endpoint', async () => {
    const h = server();
    const token = await accessToken();
    expect(await create(h, { type: 'dpop', token, proof: await proof(token) })).toBe('ok');
    expect(
      await create(h, { type: 'dpop', token, proof: await proof(token, { htu: 'https://relay.example/wmp?x=1#f' }) }),
    ).toBe('ok');
    expect(h.server.acceptedSchemes).toEqual(['did:jwk', 'did:key', 'uri']);
  });

  it('refuses a proof used twice: dpop_replay', async () => {
    const h = server();
    const token = await accessToken();
    const once = await proof(token);
    expect(await create(h, { type: 'dpop', token, proof: once })).toBe('ok');
    expect(await create(h, { type: 'dpop', token, proof: once })).toEqual(refused('dpop_replay'));
  });

  it('refuses proofs that do not fit: dpop_invalid', async () => {
    const h = server();
    const token = await accessToken();
    const other = await generateKeyPair('ES256', { extractable: true });
    const otherJwk = await exportJWK(other.publicKey);
    const cases: Array<[string, Promise<string> | string | undefined]> = [
      ['htm', proof(token, { htm: 'GET' })],
      ['htu', proof(token, { htu: 'wss://elsewhere.example/wmp' })],
      ['iat', proof(token, { iat: Math.floor(Date.now() / 1000) - 600 })],
      ['iat', proof(token, { iat: Math.floor(Date.now() / 1000) + 600 })],
      ['ath', proof(token, { ath: null })],
      ['ath', proof(token, { ath: ath('another token') })],
      ['typ', proof(token, { typ: 'JWT' })],
      // Signed by another key than the header's jwk.
      ['signature', proof(token, { key: other.privateKey })],
      // A proof by another key (consistent in itself) than the token is bound to.
      ['jkt_mismatch', proof(token, { jwk: otherJwk, key: other.privateKey })],
      ['jti', proof(token, { jti: 'x'.repeat(300) })],
      ['proof_required', undefined],
      ['malformed', 'not.a.jwt'],
    ];
    for (const [detail, p] of cases) {
      expect(await create(h, { type: 'dpop', token, ...(p === undefined ? {} : { proof: await p }) }), detail).toEqual(
        refused('dpop_invalid', detail),
      );
    }
    // A private key in the header is refused before anything else.
    const priv = (await generateKeyPair('ES256', { extractable: true })).privateKey;
    const privJwk = await exportJWK(priv);
    expect(await create(h, { type: 'dpop', token, proof: await proof(token, { jwk: privJwk, key: priv }) })).toEqual(
      refused('dpop_invalid', 'jwk'),
    );
  });

  it('refuses an unbound token as dpop, and a bound token without its proof as bearer', async () => {
    const h = server();
    const unbound = await accessToken({ cnf: null });
    expect(await create(h, { type: 'dpop', token: unbound, proof: await proof(unbound) })).toEqual(
      refused('dpop_invalid', 'token_not_bound'),
    );
    const bound = await accessToken();
    expect(await create(h, { type: 'bearer', token: bound })).toEqual(refused('dpop_invalid', 'proof_required'));
    expect(await create(h, { type: 'bearer', token: unbound })).toBe('ok');
  });

  it('refuses a proof algorithm that is not allowed: unsupported_algorithm', async () => {
    const h = server();
    const token = await accessToken();
    const hs = await new SignJWT({
      htm: 'POST',
      htu: HTU,
      iat: Math.floor(Date.now() / 1000),
      jti: 'h',
      ath: ath(token),
    })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'HS256', jwk: { kty: 'oct' } as never })
      .sign(new Uint8Array(32));
    expect(await create(h, { type: 'dpop', token, proof: hs })).toEqual(refused('unsupported_algorithm'));
  });

  it('refuses with -31007 when the replay cache is full, never forgetting a live jti', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 2 });
    const h = server(cache);
    const token = await accessToken();
    expect(await create(h, { type: 'dpop', token, proof: await proof(token) })).toBe('ok');
    expect(await create(h, { type: 'dpop', token, proof: await proof(token) })).toBe('ok');
    expect(await create(h, { type: 'dpop', token, proof: await proof(token) })).toMatchObject({
      code: -31007,
      data: { reason: 'replay_cache_full' },
    });
  });
});

describe('bearer tokens: refusal reasons', () => {
  it('names expiry, not-yet-valid, a bad signature and a refused algorithm', async () => {
    const h = harness({
      authenticators: {
        bearer: bearerAuthenticator({
          key: issuerKeys.publicKey,
          issuer: ISSUER,
          audience: AUDIENCE,
          algorithms: ['ES256'],
        }),
      },
    });
    const base = () => new SignJWT({}).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject(SUB);
    const expired = await base()
      .setProtectedHeader({ alg: 'ES256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 120)
      .sign(issuerKeys.privateKey);
    const future = await base()
      .setProtectedHeader({ alg: 'ES256' })
      .setNotBefore(Math.floor(Date.now() / 1000) + 600)
      .setExpirationTime('1h')
      .sign(issuerKeys.privateKey);
    const forged = await base()
      .setProtectedHeader({ alg: 'ES256' })
      .setExpirationTime('5m')
      .sign((await generateKeyPair('ES256')).privateKey);
    const es384 = await base()
      .setProtectedHeader({ alg: 'ES384' })
      .setExpirationTime('5m')
      .sign((await generateKeyPair('ES384')).privateKey);
    const wrongAudience = await new SignJWT({})
      .setIssuer(ISSUER)
      .setAudience('https://other')
      .setSubject(SUB)
      .setProtectedHeader({ alg: 'ES256' })
      .setExpirationTime('5m')
      .sign(issuerKeys.privateKey);
    expect(await create(h, { type: 'bearer', token: expired })).toEqual(refused('expired'));
    expect(await create(h, { type: 'bearer', token: future })).toEqual(refused('not_yet_valid'));
    expect(await create(h, { type: 'bearer', token: forged })).toEqual(refused('bad_signature'));
    expect(await create(h, { type: 'bearer', token: es384 })).toEqual(refused('unsupported_algorithm'));
    expect(await create(h, { type: 'bearer', token: wrongAudience })).toEqual(refused('invalid bearer token'));
    expect(await create(h, { type: 'bearer', token: 'garbage' })).toEqual(refused('invalid bearer token'));
  });
});
