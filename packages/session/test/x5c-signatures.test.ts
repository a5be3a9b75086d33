import { createPublicKey } from 'node:crypto';
import { jcsBytes, signMessage, verifyMessage } from '@wmp/jcs-signing';
import { type JsonRpcNotification, SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { flattenedVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  X509IdentityError,
  x5cAuthenticator,
  x5cSignatureVerifier,
  x509Identity,
  x509MessageSigner,
} from '../src/x509.js';
import { harness } from './helpers.js';
import { issue, makePki, newKey, type TestCert, type TestPki } from './pki.js';

// Non-repudiation signatures by X.509 identities (core §5.4 with x5c): @wmp/jcs-signing signs and
// frames the JWS, this package's x5cSignatureVerifier validates the chain (RFC 5280, the same
// rules as x5c authentication) and hands back the leaf key.

let pki: TestPki;
beforeAll(async () => {
  pki = await makePki();
});

const identityOf = (leaf: TestCert) =>
  x509Identity({ certificatesPem: leaf.pem + pki.intermediate.pem, privateKeyPem: leaf.key.pkcs8Pem });

function deliverFrom(sender: string): JsonRpcNotification {
  return {
    jsonrpc: '2.0',
    method: 'wmp.message.deliver',
    params: {
      wmp: { version: '0.1', sender },
      to: ['did:key:bob'],
      content_type: 'application/json',
      body: { order: 'PO-77', total: '99.00' },
    },
  };
}

async function refusal(check: Promise<unknown>): Promise<unknown> {
  try {
    await check;
    return 'ok';
  } catch (e) {
    if (!(e instanceof SignatureInvalidError)) throw e;
    return e.data;
  }
}

describe('ES256 signatures of X.509 identities (core §5.4, x5c)', () => {
  it('signs with the chain in the header; verifies against the trust anchors', async () => {
    const identity = await identityOf(pki.dnsLeaf);
    const signer = await x509MessageSigner(identity);
    expect(signer.alg).toBe('ES256');
    expect(signer.kid).toMatch(/^x509:san:dns:wallet\.example\.com#[0-9a-f]{64}$/);
    const signed = await signMessage(deliverFrom(identity.id), signer);
    const verifier = x5cSignatureVerifier({ trustAnchors: pki.root.pem });
    await expect(verifyMessage(signed, { required: true, x5c: verifier })).resolves.toMatchObject({
      signer: identity.id,
      alg: 'ES256',
      x5c: identity.x5c,
    });
  });

  it('jose verifies the detached JWS with the leaf certificate key', async () => {
    const identity = await identityOf(pki.dnsLeaf);
    const signed = await signMessage(deliverFrom(identity.id), await x509MessageSigner(identity));
    const jws = String((signed.params as { wmp: { signature: string } }).wmp.signature);
    const [header, , signature] = jws.split('.');
    const { wmp: _wmp, ...content } = signed.params as Record<string, unknown>;
    const key = createPublicKey({ key: pki.dnsLeaf.pem, format: 'pem' });
    const { protectedHeader } = await flattenedVerify(
      { protected: header!, payload: Buffer.from(jcsBytes(content)), signature: signature! },
      key,
      { algorithms: ['ES256'] },
    );
    expect(protectedHeader?.x5c).toEqual(identity.x5c);
    await expect(
      flattenedVerify({ protected: header!, payload: Buffer.from('{}'), signature: signature! }, key),
    ).rejects.toThrow();
  });

  it('signs EdDSA with an Ed25519 leaf, and refuses an RSA identity for message signatures', async () => {
    const ed = await identityOf(pki.edLeaf);
    const signer = await x509MessageSigner(ed);
    expect(signer.alg).toBe('EdDSA');
    const signed = await signMessage(deliverFrom(ed.id), signer);
    await expect(
      verifyMessage(signed, { x5c: x5cSignatureVerifier({ trustAnchors: pki.root.pem }) }),
    ).resolves.toMatchObject({ alg: 'EdDSA', signer: ed.id });
    await expect(x509MessageSigner(await identityOf(pki.uriLeaf))).rejects.toBeInstanceOf(X509IdentityError);
  });

  it('refuses chains the anchors do not vouch for, naming the rule (-31010 untrusted_chain)', async () => {
    const verifier = x5cSignatureVerifier({ trustAnchors: pki.root.pem });
    const signedBy = async (leaf: TestCert, chain: TestCert[] = [pki.intermediate]) => {
      const identity = await x509Identity({
        certificatesPem: [leaf, ...chain].map((c) => c.pem).join(''),
        privateKeyPem: leaf.key.pkcs8Pem,
      });
      return signMessage(deliverFrom(identity.id), await x509MessageSigner(identity));
    };
    expect(await refusal(verifyMessage(await signedBy(pki.expiredLeaf), { x5c: verifier }))).toEqual({
      reason: 'untrusted_chain',
      detail: 'expired',
    });
    expect(await refusal(verifyMessage(await signedBy(pki.foreignLeaf, []), { x5c: verifier }))).toEqual({
      reason: 'untrusted_chain',
      detail: 'untrusted_chain',
    });
    expect(await refusal(verifyMessage(await signedBy(pki.noSignLeaf), { x5c: verifier }))).toEqual({
      reason: 'untrusted_chain',
      detail: 'key_usage',
    });
    // A server certificate (serverAuth only) is no sender's: the verifier asks for clientAuth.
    const serverOnly = await issue({
      subject: 'server',
      key: newKey('p256'),
      issuer: pki.intermediate,
      dns: ['server.example.com'],
      keyUsage: ['digitalSignature'],
      extKeyUsage: ['serverAuth'],
    });
    expect(await refusal(verifyMessage(await signedBy(serverOnly), { x5c: verifier }))).toEqual({
      reason: 'untrusted_chain',
      detail: 'extended_key_usage',
    });
  });

  it('binds the certificate to wmp.sender: another SAN than the sender is refused', async () => {
    const identity = await identityOf(pki.dnsLeaf);
    const signer = await x509MessageSigner(identity);
    // The kid claims another identity the certificate does not prove.
    const claimed = await signMessage(deliverFrom('x509:san:dns:other.example.com'), {
      ...signer,
      kid: 'x509:san:dns:other.example.com#k',
    });
    expect(
      await refusal(verifyMessage(claimed, { x5c: x5cSignatureVerifier({ trustAnchors: pki.root.pem }) })),
    ).toEqual({ reason: 'untrusted_chain', detail: 'san_mismatch' });
    const other = await signMessage(deliverFrom('x509:san:dns:other.example.com'), signer);
    expect(await refusal(verifyMessage(other, { x5c: x5cSignatureVerifier({ trustAnchors: pki.root.pem }) }))).toEqual({
      reason: 'signer_mismatch',
    });
  });

  it('WmpServer requireSignatures verifies x5c signatures with signatureChains', async () => {
    const identity = await identityOf(pki.dnsLeaf);
    const h = harness({
      requireSignatures: ['wmp.message.deliver'],
      signatureChains: x5cSignatureVerifier({ trustAnchors: pki.root.pem }),
      authenticators: { x5c: x5cAuthenticator({ trustAnchors: pki.root.pem }) },
    });
    const { session, peer } = await h.open({ x509: identity });
    const signed = await signMessage(
      { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { wmp: session.metadata(), to: [], body: 'signed' } },
      await x509MessageSigner(identity),
    );
    await expect(peer.request('wmp.message.deliver', signed.params as Record<string, unknown>)).resolves.toEqual({});
    const without = harness({
      requireSignatures: ['wmp.message.deliver'],
      authenticators: { x5c: x5cAuthenticator({ trustAnchors: pki.root.pem }) },
    });
    const other = await without.open({ x509: identity });
    const signedThere = await signMessage(
      { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { wmp: other.session.metadata(), to: [], body: 's' } },
      await x509MessageSigner(identity),
    );
    await expect(
      other.peer.request('wmp.message.deliver', signedThere.params as Record<string, unknown>),
    ).rejects.toMatchObject({ code: -31010, data: { reason: 'untrusted_chain', detail: 'no_trust_anchors' } });
  });
});
