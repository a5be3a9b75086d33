import { beforeAll, describe, expect, it } from 'vitest';
import { mtlsAuthenticator } from '../src/x509.js';
import { refusal } from './auth-helpers.js';
import { makePki, type TestCert, type TestPki } from './pki.js';

let pki: TestPki;
beforeAll(async () => {
  pki = await makePki();
});

/** One inline `mtls` authentication with the chain the TLS layer handed over. */
function attempt(sender: string, chain: readonly TestCert[] | undefined) {
  const authenticator = mtlsAuthenticator({ trustAnchors: pki.root.pem });
  return refusal(
    authenticator.authenticate({
      auth: { type: 'mtls' },
      sessionId: '',
      sender,
      challenge: undefined,
      timestamp: undefined,
      now: Date.now(),
      ...(chain === undefined ? {} : { peerCertificates: chain.map((c) => c.der) }),
    }),
  );
}

describe('mtls authenticator', () => {
  it('accepts a sender the verified client certificate names, by SAN or fingerprint', async () => {
    expect(await attempt('x509:san:dns:wallet.example.com', [pki.dnsLeaf, pki.intermediate])).toBe('ok');
    // The TLS layer may append the anchor it verified with: it is not checked as an intermediate.
    expect(await attempt('x509:san:uri:https://issuer.example.eu/wmp', [pki.uriLeaf, pki.intermediate, pki.root])).toBe(
      'ok',
    );
  });

  it('refuses with the fixed reasons', async () => {
    const reason = async (sender: string, chain: readonly TestCert[] | undefined) =>
      ((await attempt(sender, chain)) as { data: unknown }).data;
    expect(await reason('x509:san:dns:wallet.example.com', undefined)).toEqual({
      reason: 'untrusted_chain',
      detail: 'no_client_certificate',
    });
    expect(await reason('x509:san:dns:wallet.example.com', [pki.foreignLeaf])).toMatchObject({
      reason: 'untrusted_chain',
    });
    expect(await reason('x509:san:dns:expired.example.com', [pki.expiredLeaf, pki.intermediate])).toMatchObject({
      reason: 'expired',
    });
    expect(await reason('x509:san:dns:bank.example', [pki.dnsLeaf, pki.intermediate])).toMatchObject({
      reason: 'san_mismatch',
    });
    expect(await reason('did:key:z6Mkf', [pki.dnsLeaf, pki.intermediate])).toMatchObject({
      reason: 'unsupported_scheme',
    });
    expect(
      await reason(
        'x509:san:dns:wallet.example.com',
        Array.from({ length: 20 }, () => pki.intermediate),
      ),
    ).toEqual({ reason: 'untrusted_chain', detail: 'chain_too_long' });
  });
});
