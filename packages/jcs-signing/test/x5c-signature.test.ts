import { createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { type JsonRpcNotification, SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import canonicalize from 'canonicalize';
import { FlattenedSign, flattenedVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  appendRelayEntry,
  b64urlEncode,
  generateKeypair,
  signMessage,
  utf8,
  verifyMessage,
  verifyP256,
  verifyRelayChain,
  type X5cChainVerifier,
  type X5cSigner,
} from '../src/index.js';

// ES256 signatures with an `x5c` header (X.509 identities). The chain check is injected
// (`X5cChainVerifier`; @wmp/session/x509 has the real one, tested there against real
// certificates): here a stand-in whose "certificates" are the signers' SPKI DER, so that only
// the JWS framing and the key check of this package are under test.

const ALICE = 'x509:san:dns:alice.example';

interface P256Party {
  readonly id: string;
  readonly publicKey: KeyObject;
  readonly signer: X5cSigner;
}

function p256Party(id: string): P256Party {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return {
    id,
    publicKey,
    signer: {
      alg: 'ES256',
      kid: `${id}#k1`,
      x5c: [spki.toString('base64')],
      sign: (data) => new Uint8Array(sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' })),
    },
  };
}

const alice = p256Party(ALICE);

/** Trusts the SPKIs it was given, each for one identifier. */
function standInVerifier(...parties: P256Party[]): X5cChainVerifier {
  return {
    async verify(x5c, identifier) {
      const party = parties.find((p) => p.signer.x5c[0] === x5c[0]);
      if (!party) throw new SignatureInvalidError({ reason: 'untrusted_chain', detail: 'unknown_anchor' });
      if (party.id !== identifier) throw new SignatureInvalidError({ reason: 'san_mismatch' });
      const der = Buffer.from(x5c[0]!, 'base64');
      return { alg: 'ES256', publicKey: new Uint8Array(der.subarray(der.length - 65)) };
    },
  };
}

const deliver: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'wmp.message.deliver',
  params: {
    wmp: { version: '0.1', sender: ALICE },
    to: ['did:key:bob'],
    content_type: 'application/json',
    body: { invoice: 'INV-7', amount: '12.50' },
  },
};

const wmpOf = (m: JsonRpcNotification) => (m.params as { wmp: Record<string, unknown> }).wmp;

async function reasonOf(check: Promise<unknown>): Promise<unknown> {
  try {
    await check;
    return 'ok';
  } catch (e) {
    if (!(e instanceof SignatureInvalidError)) throw e;
    return e.data;
  }
}

describe('ES256 message signatures with x5c (core §5.4)', () => {
  it('signs with the x5c in the header and verifies through the chain verifier', async () => {
    const signed = await signMessage(deliver, alice.signer);
    const [header] = String(wmpOf(signed).signature).split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({
      alg: 'ES256',
      b64: false,
      crit: ['b64'],
      kid: `${ALICE}#k1`,
      x5c: alice.signer.x5c,
    });
    const verified = await verifyMessage(signed, { required: true, x5c: standInVerifier(alice) });
    expect(verified).toMatchObject({ alg: 'ES256', signer: ALICE, kid: `${ALICE}#k1`, x5c: alice.signer.x5c });
    expect(verified?.publicKey).toHaveLength(65);
  });

  it('jose verifies our ES256 detached JWS, and we verify one jose made', async () => {
    const signed = await signMessage(deliver, alice.signer);
    const [protectedHeader, , signature] = String(wmpOf(signed).signature).split('.');
    const { wmp: _wmp, ...content } = deliver.params as Record<string, unknown>;
    const payload = Buffer.from(canonicalize(content) as string, 'utf8');
    const jwk = alice.publicKey.export({ format: 'jwk' });
    const result = await flattenedVerify({ protected: protectedHeader!, payload, signature: signature! }, jwk, {
      algorithms: ['ES256'],
    });
    expect(result.protectedHeader).toMatchObject({ alg: 'ES256', b64: false, kid: `${ALICE}#k1` });
    const tampered = Buffer.from(payload);
    tampered[tampered.length - 3]! ^= 1;
    await expect(
      flattenedVerify({ protected: protectedHeader!, payload: tampered, signature: signature! }, jwk),
    ).rejects.toThrow();

    // The other direction: jose signs (its own header member order), we verify as received.
    const bob = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const bobParty: P256Party = {
      id: 'x509:san:dns:bob.example',
      publicKey: bob.publicKey,
      signer: {
        ...alice.signer,
        kid: 'x509:san:dns:bob.example#k',
        x5c: [bob.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')],
      },
    };
    const joseJws = await new FlattenedSign(payload)
      .setProtectedHeader({
        alg: 'ES256',
        kid: bobParty.signer.kid,
        x5c: [...bobParty.signer.x5c],
        b64: false,
        crit: ['b64'],
      })
      .sign(bob.privateKey);
    const fromJose: JsonRpcNotification = {
      ...deliver,
      params: {
        ...(deliver.params as object),
        wmp: { version: '0.1', sender: bobParty.id, signature: `${joseJws.protected}..${joseJws.signature}` },
      },
    };
    await expect(verifyMessage(fromJose, { x5c: standInVerifier(bobParty) })).resolves.toMatchObject({
      signer: bobParty.id,
      alg: 'ES256',
    });
  });

  it('refuses an x5c signature without a chain verifier, or one the verifier refuses', async () => {
    const signed = await signMessage(deliver, alice.signer);
    expect(await reasonOf(verifyMessage(signed))).toEqual({ reason: 'untrusted_chain', detail: 'no_trust_anchors' });
    const stranger = p256Party(ALICE);
    expect(await reasonOf(verifyMessage(signed, { x5c: standInVerifier(stranger) }))).toEqual({
      reason: 'untrusted_chain',
      detail: 'unknown_anchor',
    });
  });

  it('binds the signature to wmp.sender: the kid names the identity the leaf must prove', async () => {
    const mallory = p256Party('x509:san:dns:mallory.example');
    const forged = await signMessage(deliver, mallory.signer);
    expect(await reasonOf(verifyMessage(forged, { x5c: standInVerifier(mallory) }))).toEqual({
      reason: 'signer_mismatch',
    });
    // A kid naming alice over mallory's certificate: the verifier finds the leaf does not prove alice.
    const claimed = await signMessage(deliver, { ...mallory.signer, kid: `${ALICE}#k1` });
    expect(await reasonOf(verifyMessage(claimed, { x5c: standInVerifier(mallory) }))).toEqual({
      reason: 'untrusted_chain',
      detail: 'san_mismatch',
    });
  });

  it('refuses altered content, ES256 without x5c, a malformed x5c, and an alg that is not the leaf key', async () => {
    const verifier = standInVerifier(alice);
    const signed = await signMessage(deliver, alice.signer);
    const params = signed.params as { body: Record<string, unknown> };
    const altered = { ...signed, params: { ...params, body: { ...params.body, amount: '1250.00' } } };
    expect(await reasonOf(verifyMessage(altered, { x5c: verifier }))).toEqual({ reason: 'signature' });

    const withHeader = async (header: Record<string, unknown>) => {
      const encoded = b64urlEncode(utf8(JSON.stringify(header)));
      const sig = b64urlEncode(await alice.signer.sign(utf8(`${encoded}.`)));
      const m = {
        ...deliver,
        params: { ...(deliver.params as object), wmp: { ...wmpOf(deliver), signature: `${encoded}..${sig}` } },
      };
      return reasonOf(verifyMessage(m, { x5c: verifier }));
    };
    const base = { alg: 'ES256', b64: false, crit: ['b64'], kid: `${ALICE}#k1` };
    expect(await withHeader(base)).toEqual({ reason: 'header' });
    expect(await withHeader({ ...base, x5c: 'not-an-array' })).toEqual({ reason: 'header' });
    expect(await withHeader({ ...base, x5c: [] })).toEqual({ reason: 'header' });
    expect(await withHeader({ ...base, x5c: ['not base64!'] })).toEqual({ reason: 'header' });
    expect(await withHeader({ ...base, x5c: Array(11).fill(alice.signer.x5c[0]) })).toEqual({ reason: 'header' });
    // EdDSA claimed over a P-256 leaf.
    expect(await withHeader({ ...base, alg: 'EdDSA', x5c: alice.signer.x5c })).toEqual({ reason: 'header' });
  });

  it('accepts high-S signatures and refuses points off the curve, on this crypto path', async () => {
    const n = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');
    const data = utf8('high-S check');
    const sig = await alice.signer.sign(data);
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).toString('hex')}`);
    const flipped = new Uint8Array(sig);
    flipped.set(Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex'), 32);
    const der = Buffer.from(alice.signer.x5c[0]!, 'base64');
    const point = new Uint8Array(der.subarray(der.length - 65));
    // Both S and n - S verify (JWS ES256 has no low-S rule; node:crypto and noble must agree).
    expect(verifyP256(point, data, sig)).toBe(true);
    expect(verifyP256(point, data, flipped)).toBe(true);
    const offCurve = new Uint8Array(point);
    offCurve[64]! ^= 1;
    expect(verifyP256(offCurve, data, sig)).toBe(false);
    expect(verifyP256(point.subarray(0, 33), data, sig)).toBe(false);
    expect(verifyP256(point, data, new Uint8Array(64))).toBe(false);
    // And createPublicKey agrees the point is the key (no accident of our prefix).
    expect(
      createPublicKey({
        key: Buffer.concat([Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex'), point]),
        format: 'der',
        type: 'spki',
      }).asymmetricKeyType,
    ).toBe('ec');
  });

  it('verifies a relay chain whose hop was signed with an x5c', async () => {
    const relay = p256Party('x509:san:dns:relay.example');
    const plain = generateKeypair();
    let m = await appendRelayEntry(deliver, {
      relay: 'wss://relay.example/wmp',
      relayId: relay.id,
      signer: relay.signer,
    });
    m = await appendRelayEntry(m, { relay: 'wss://other.example/wmp', relayId: plain.did, signer: plain });
    await expect(verifyRelayChain(m, { x5c: standInVerifier(relay) })).resolves.toBe(2);
    expect(await reasonOf(verifyRelayChain(m))).toEqual({
      reason: 'untrusted_chain',
      detail: 'no_trust_anchors',
      hop: 0,
    });
  });
});
