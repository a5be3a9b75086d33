import { describe, expect, it } from 'vitest';
import {
  b64urlDecode,
  EVIDENCE_JWS_TYPE,
  fromUtf8,
  generateKeypair,
  jcs,
  signDetached,
  signEvidence,
  verifyEvidence,
} from '../src/index.js';

const relay = generateKeypair();
const other = generateKeypair();
const record = {
  evidence_id: 'ev-1',
  evidence_version: '1.0',
  event_type: 'submission_accepted',
  original_message_id: 'msg-1',
  original_sender: 'did:key:alice',
  original_content_hash: { algorithm: 'sha-256', value: 'abc' },
  event_time: '2026-12-01T10:00:00Z',
  evidence_issuer: { id: relay.did },
};

async function reasonOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as { code: number; data: { reason: string } }).data.reason;
  }
}

describe('evidence record signatures (wmp-tables §9)', () => {
  it('a detached JWS over JCS(record), typed wmp-evidence+jws, verified against the issuer it names', async () => {
    const signed = await signEvidence(record, relay);
    const [header, payload, signature] = signed.split('.');
    expect(payload).toBe('');
    expect(signature!.length).toBeGreaterThan(80);
    expect(JSON.parse(fromUtf8(b64urlDecode(header!)))).toEqual({
      alg: 'EdDSA',
      b64: false,
      crit: ['b64'],
      kid: `${relay.did}#${relay.did.slice('did:key:'.length)}`,
      typ: EVIDENCE_JWS_TYPE,
    });
    expect(await verifyEvidence(record, signed)).toMatchObject({ issuer: relay.did, alg: 'EdDSA' });
  });

  it('refuses a changed record, another issuer, a message signature and a missing one', async () => {
    const signed = await signEvidence(record, relay);
    expect(await reasonOf(verifyEvidence({ ...record, event_type: 'delivery_confirmed' }, signed))).toBe('signature');
    // Signed by a key that is not the issuer's the record names, or named as someone else's.
    const forged = await signEvidence(record, other);
    expect(await reasonOf(verifyEvidence(record, forged))).toBe('signer_mismatch');
    expect(await reasonOf(verifyEvidence(record, signed, { issuer: other.did }))).toBe('signer_mismatch');
    const { evidence_issuer: _i, ...anonymous } = record;
    expect(await reasonOf(verifyEvidence(anonymous, await signEvidence(anonymous, relay)))).toBe('signer_mismatch');
    // The same key's detached signature of the same bytes without the evidence type is no evidence.
    const untyped = await signDetached(new TextEncoder().encode(jcs(record)), relay);
    expect(await reasonOf(verifyEvidence(record, untyped))).toBe('header');
    expect(await reasonOf(verifyEvidence(record, undefined))).toBe('missing');
    expect(await reasonOf(verifyEvidence(record, 'not-a-jws'))).toBe('malformed');
  });
});
