import { readFileSync } from 'node:fs';
import { FlattenedSign, flattenedVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  b64urlEncode,
  decodeDetachedJws,
  didKeyResolver,
  fromHex,
  generateKeypair,
  jcs,
  jcsBytes,
  keypairFromSeed,
  signDetached,
  utf8,
  verifyDetached,
} from '../src/index.js';

const v = JSON.parse(
  readFileSync(new URL('../../../vectors/crypto-vectors.json', import.meta.url), 'utf8'),
).jws_detached_b64false;

async function reason(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (e) {
    return (e as { code: number; data: { reason: string } }).code === -31010
      ? (e as { data: { reason: string } }).data.reason
      : e;
  }
  return 'verified';
}

describe('detached JWS vector (RFC 7797, b64:false)', () => {
  const kp = keypairFromSeed(fromHex(v.ed25519_seed_hex));
  const payload = jcsBytes(v.content);

  it('JCS of the content is the vector payload', () => {
    expect(jcs(v.content)).toBe(v.content_jcs);
    expect(Buffer.from(payload).toString('hex')).toBe(v.payload_hex);
  });

  it('reproduces the signature over ASCII(header) "." payload', () => {
    expect(b64urlEncode(utf8(v.protected_header_json))).toBe(v.protected_b64url);
    const input = new Uint8Array([...utf8(`${v.protected_b64url}.`), ...payload]);
    expect(b64urlEncode(kp.sign(input))).toBe(v.signature_b64url);
  });

  it('verifies the compact detached vector and refuses it over another payload', async () => {
    await expect(verifyDetached(v.compact_detached_jws, payload, { key: kp.publicKey })).resolves.toMatchObject({
      header: { alg: 'EdDSA', b64: false, crit: ['b64'] },
    });
    const other = payload.slice();
    other[5]! ^= 1;
    expect(await reason(() => verifyDetached(v.compact_detached_jws, other, { key: kp.publicKey }))).toBe('signature');
  });
});

describe('signDetached / verifyDetached', () => {
  const kp = generateKeypair();
  const payload = utf8('{"a":1}');
  const header = (h: object) => b64urlEncode(utf8(JSON.stringify(h)));
  const sigOf = (jws: string) => jws.split('..')[1]!;

  it('signs with kid, resolves it, and binds it to the expected signer', async () => {
    const jws = await signDetached(payload, kp);
    expect(decodeDetachedJws(jws).header).toEqual({ alg: 'EdDSA', b64: false, crit: ['b64'], kid: kp.kid });
    await expect(verifyDetached(jws, payload, { key: didKeyResolver, signer: kp.did })).resolves.toBeDefined();
    expect(
      await reason(() => verifyDetached(jws, payload, { key: didKeyResolver, signer: generateKeypair().did })),
    ).toBe('signer_mismatch');
    const unknown = { ...kp, kid: 'did:web:example.com#k1', sign: kp.sign };
    const jws2 = await signDetached(payload, unknown);
    expect(await reason(() => verifyDetached(jws2, payload, { key: didKeyResolver }))).toBe('unknown_key');
  });

  it.each([
    ['b64 true', { alg: 'EdDSA', b64: true, crit: ['b64'] }],
    ['no crit', { alg: 'EdDSA', b64: false }],
    ['an extra critical parameter', { alg: 'EdDSA', b64: false, crit: ['b64', 'exp'] }],
    ['another algorithm', { alg: 'HS256', b64: false, crit: ['b64'] }],
    ['alg none', { alg: 'none', b64: false, crit: ['b64'] }],
  ])('refuses a header with %s', async (_name, h) => {
    const jws = `${header(h)}..${sigOf(await signDetached(payload, kp))}`;
    expect(await reason(() => verifyDetached(jws, payload, { key: kp.publicKey }))).toBe('header');
  });

  it('refuses a header with a duplicate key', async () => {
    const dup = b64urlEncode(utf8('{"alg":"EdDSA","b64":false,"b64":true,"crit":["b64"]}'));
    const jws = `${dup}..${sigOf(await signDetached(payload, kp))}`;
    expect(await reason(() => verifyDetached(jws, payload, { key: kp.publicKey }))).toBe('header');
  });

  it.each(['', 'abc', 'a.b.c', 'a..b..c', 'eyJ9..!!', 'eyJ9.x.c2ln'])('refuses the malformed JWS %j', async (jws) => {
    expect(await reason(() => verifyDetached(jws, payload, { key: kp.publicKey }))).toMatch(/malformed|header/);
  });

  it('interoperates with jose in both directions', async () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: b64urlEncode(kp.publicKey) };
    const ours = await signDetached(payload, kp);
    const [protectedHeader, , signature] = ours.split('.');
    await expect(
      flattenedVerify({ protected: protectedHeader!, payload, signature: signature! }, jwk, { algorithms: ['EdDSA'] }),
    ).resolves.toBeDefined();

    const privateJwk = { ...jwk, d: b64urlEncode(kp.exportSeed()) };
    const theirs = await new FlattenedSign(payload)
      .setProtectedHeader({ alg: 'EdDSA', b64: false, crit: ['b64'], kid: kp.kid })
      .sign(privateJwk);
    await expect(
      verifyDetached(`${theirs.protected}..${theirs.signature}`, payload, { key: didKeyResolver, signer: kp.did }),
    ).resolves.toBeDefined();
  });
});
