import { generateKeyPairSync, sign } from 'node:crypto';
import { DelegationInvalidError, SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import {
  b64urlDecode,
  b64urlEncode,
  fromUtf8,
  generateKeypair,
  jcs,
  signMandate,
  utf8,
  verifyMandate,
  type X5cChainVerifier,
  type X5cSigner,
} from '../src/index.js';

// Mandates (core §3.3): a principal's compact JWS over the JCS of {delegate, principal, scope,
// valid_until}. Every refusal is -31015 with its reason.

const principal = generateKeypair();
const delegate = generateKeypair();
const claims = {
  delegate: delegate.did,
  principal: principal.did,
  scope: ['submit'],
  valid_until: '2030-01-01T00:00:00Z',
};

async function refusal(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(DelegationInvalidError);
    return (e as { data?: { reason?: unknown } }).data?.reason as string;
  }
  return undefined;
}

/** `jws` with its payload replaced by `payload` (text), the signature left as it was. */
function withPayload(jws: string, payload: string): string {
  const [h, , s] = jws.split('.');
  return `${h}.${b64urlEncode(utf8(payload))}.${s}`;
}

describe('mandates', () => {
  it('a mandate signed by the principal verifies and says what it was signed with', async () => {
    const jws = await signMandate(claims, principal);
    const verified = await verifyMandate(jws);
    expect(verified).toMatchObject({ ...claims, kid: principal.kid, alg: 'EdDSA' });
    expect(verified.validUntil).toBe(Date.parse(claims.valid_until));
    const header = JSON.parse(fromUtf8(b64urlDecode(jws.split('.')[0]!)));
    expect(header).toEqual({ alg: 'EdDSA', kid: principal.kid, typ: 'wmp-mandate+jws' });
    // The payload is the JCS of the claims, exactly.
    expect(fromUtf8(b64urlDecode(jws.split('.')[1]!))).toBe(jcs(claims));
  });

  it('a mandate signed by someone else than its principal is principal_mismatch', async () => {
    expect(await refusal(verifyMandate(await signMandate(claims, delegate)))).toBe('principal_mismatch');
  });

  it('a changed payload is bad_signature: the signed payload rules', async () => {
    const jws = await signMandate(claims, principal);
    const widened = jcs({ ...claims, scope: ['retrieve', 'submit'] });
    expect(await refusal(verifyMandate(withPayload(jws, widened)))).toBe('bad_signature');
  });

  it('a payload that is not the canonical form of exactly the four claims is malformed', async () => {
    const jws = await signMandate(claims, principal);
    const spaced = JSON.stringify(claims, null, 1);
    expect(await refusal(verifyMandate(withPayload(jws, spaced)))).toBe('malformed');
    const extra = jcs({ ...claims, admin: true });
    expect(await refusal(verifyMandate(withPayload(jws, extra)))).toBe('malformed');
    for (const bad of [
      { ...claims, scope: [] },
      { ...claims, scope: 'submit' },
      { ...claims, valid_until: 'tomorrow' },
      { ...claims, delegate: '' },
    ]) {
      expect(await refusal(verifyMandate(await signMandate(bad as never, principal)))).toBe('malformed');
    }
    for (const junk of [undefined, 42, 'a.b', 'x'.repeat(40_000), `${jws}.more`]) {
      expect(await refusal(verifyMandate(junk))).toBe('malformed');
    }
  });

  it('a header that is not a mandate header is malformed (typ, alg, kid)', async () => {
    const jws = await signMandate(claims, principal);
    const [, p, s] = jws.split('.');
    for (const header of [
      { alg: 'EdDSA', kid: principal.kid },
      { alg: 'none', kid: principal.kid, typ: 'wmp-mandate+jws' },
      { alg: 'EdDSA', typ: 'wmp-mandate+jws' },
      { alg: 'ES256', kid: principal.kid, typ: 'wmp-mandate+jws' },
    ]) {
      expect(await refusal(verifyMandate(`${b64urlEncode(utf8(jcs(header)))}.${p}.${s}`))).toBe('malformed');
    }
  });

  it('a principal whose key nobody resolves is unknown_key', async () => {
    const web = { ...claims, principal: 'did:web:example.com' };
    const signer = { ...principal, kid: 'did:web:example.com#k1' };
    expect(await refusal(verifyMandate(await signMandate(web, signer)))).toBe('unknown_key');
  });

  describe('ES256 with x5c (an X.509 principal)', () => {
    const id = 'x509:san:dns:org.example';
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    const signer: X5cSigner = {
      alg: 'ES256',
      kid: `${id}#k1`,
      x5c: [spki.toString('base64')],
      sign: (data) => new Uint8Array(sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' })),
    };
    // Stands in for the real chain check (@wmp/session/x509): trusts this one SPKI for `id`.
    const chains: X5cChainVerifier = {
      async verify(x5c, identifier) {
        if (x5c[0] !== signer.x5c[0] || identifier !== id) throw new SignatureInvalidError({ reason: 'untrusted' });
        return { alg: 'ES256', publicKey: new Uint8Array(spki.subarray(spki.length - 65)) };
      },
    };
    const x509Claims = { ...claims, principal: id };

    it('verifies with the chain check, and is untrusted_chain without one or with another', async () => {
      const jws = await signMandate(x509Claims, signer);
      expect(await verifyMandate(jws, { x5c: chains })).toMatchObject({ principal: id, alg: 'ES256' });
      expect(await refusal(verifyMandate(jws))).toBe('untrusted_chain');
      const none: X5cChainVerifier = {
        verify: () => Promise.reject(new Error('no')),
      };
      expect(await refusal(verifyMandate(jws, { x5c: none }))).toBe('untrusted_chain');
    });
  });
});
