import { beforeAll, describe, expect, it } from 'vitest';
import { mtlsAuthenticator } from '../src/x509.js';
import { refusal } from './auth-helpers.js';
import { type HostilePki, makeHostilePki } from './hostile-pki.js';
import { opensslVerify } from './openssl-verify.js';
import { issue, makePki, newKey, type TestCert, type TestPki } from './pki.js';

let pki: TestPki;
let hostile: HostilePki;
beforeAll(async () => {
  pki = await makePki();
  hostile = await makeHostilePki(pki);
});

/** One inline `mtls` authentication with the chain the TLS layer handed over. */
function attempt(sender: string, chain: readonly TestCert[] | undefined, anchors: readonly TestCert[] = [pki.root]) {
  const authenticator = mtlsAuthenticator({ trustAnchors: anchors.map((a) => a.pem) });
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

  it('applies the x5c chain rules (RFC 5280) to client certificates, as `openssl verify -purpose sslclient` does', async () => {
    const ours: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    const openssl: Record<string, string> = {};
    const expectedOpenssl: Record<string, string> = {};
    for (const c of hostile.senderCases) {
      const r = await attempt(c.sender, c.chain, c.anchors);
      ours[c.name] = r === 'ok' ? 'ok' : r.data;
      expected[c.name] = c.expected;
      openssl[c.name] = (await opensslVerify(c.chain, c.anchors, 'sslclient')).ok ? 'accepts' : 'refuses';
      expectedOpenssl[c.name] = (c.expected === 'ok') !== (c.opensslAgrees === false) ? 'accepts' : 'refuses';
    }
    expect(ours).toEqual(expected);
    expect(openssl).toEqual(expectedOpenssl);
  });

  it('refuses a server certificate as a client certificate (serverAuth only), like openssl', async () => {
    // What a relay serves TLS with: its name, digitalSignature, serverAuth.
    const server = await issue({
      subject: 'relay tls',
      key: newKey('p256'),
      issuer: pki.intermediate,
      dns: ['relay.example.net'],
      keyUsage: ['digitalSignature'],
      extKeyUsage: ['serverAuth'],
    });
    expect(await attempt('x509:san:dns:relay.example.net', [server, pki.intermediate])).toEqual({
      code: -31002,
      data: { reason: 'untrusted_chain', detail: 'extended_key_usage' },
    });
    expect((await opensslVerify([server, pki.intermediate], [pki.root], 'sslclient')).ok).toBe(false);
    expect((await opensslVerify([server, pki.intermediate], [pki.root], 'sslserver')).ok).toBe(true);
  });
});
