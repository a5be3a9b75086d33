import { FlattenedSign, flattenedVerify, importPKCS8 } from 'jose';
import { describe, expect, it } from 'vitest';
import { decodeJws, importVerifyKey, type JwsAlgorithm, signJws, verifyDecodedJws } from '../src/auth/jws.js';
import { refusal, signerOf } from './auth-helpers.js';
import { type KeyKind, newKey } from './pki.js';

const payload = new TextEncoder().encode('{"challenge":"ch-1","sender":"x","session_id":"ses-1","timestamp":"t"}');
const cases: Array<[JwsAlgorithm, KeyKind]> = [
  ['ES256', 'p256'],
  ['ES384', 'p384'],
  ['EdDSA', 'ed25519'],
  ['PS256', 'rsa'],
  ['RS256', 'rsa'],
];

describe('detached JWS on WebCrypto, checked against jose', () => {
  for (const [alg, kind] of cases) {
    it(`${alg}: jose verifies ours and we verify jose's`, async () => {
      const key = newKey(kind);
      const spki = new Uint8Array(key.publicKey.export({ type: 'spki', format: 'der' }));
      const ours = await signJws(payload, await signerOf(key, alg));
      const [protectedHeader, , signature] = ours.split('.');
      const joseKey = key.publicKey;
      await expect(
        flattenedVerify({ protected: protectedHeader!, payload, signature: signature! }, joseKey),
      ).resolves.toBeDefined();
      const theirs = await new FlattenedSign(payload)
        .setProtectedHeader({ alg, b64: false, crit: ['b64'] })
        .sign(await importPKCS8(key.pkcs8Pem, alg));
      const decoded = decodeJws(`${theirs.protected}..${theirs.signature}`);
      await expect(
        verifyDecodedJws(decoded, payload, await importVerifyKey(alg, 'spki', spki)),
      ).resolves.toBeUndefined();
      // One changed byte of the payload fails.
      const other = payload.slice();
      other[5] = (other[5] ?? 0) ^ 1;
      expect(await refusal(verifyDecodedJws(decoded, other, await importVerifyKey(alg, 'spki', spki)))).toEqual({
        code: -31002,
        data: { reason: 'bad_signature' },
      });
    });
  }

  it('refuses headers without b64:false or with other critical members', () => {
    const h = (o: unknown) => `${Buffer.from(JSON.stringify(o)).toString('base64url')}..AAAA`;
    expect(() => decodeJws(h({ alg: 'ES256' }))).toThrow(
      expect.objectContaining({ data: { reason: 'bad_signature', detail: 'header' } }),
    );
    expect(() => decodeJws(h({ alg: 'ES256', b64: false, crit: ['b64', 'exp'] }))).toThrow(
      expect.objectContaining({ data: { reason: 'bad_signature', detail: 'header' } }),
    );
    expect(() => decodeJws(h({ alg: 'none', b64: false, crit: ['b64'] }))).toThrow(
      expect.objectContaining({ data: { reason: 'unsupported_algorithm' } }),
    );
    expect(() => decodeJws('a.b.c')).toThrow(
      expect.objectContaining({ data: { reason: 'bad_signature', detail: 'malformed' } }),
    );
  });
});
