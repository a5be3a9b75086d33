import { X509Certificate } from 'node:crypto';
import { generateKeypair } from '@wmp/jcs-signing';
import { beforeAll, describe, expect, it } from 'vitest';
import { challengePayload } from '../src/auth/challenge.js';
import type { JwsAlgorithm } from '../src/auth/jws.js';
import { signJws } from '../src/auth/jws.js';
import { signedChallengeAuthenticator } from '../src/index.js';
import { CertificateParseError, x5cAuthenticator } from '../src/x509.js';
import { answerX5c, createAs, nowRfc3339, refusal, signerOf } from './auth-helpers.js';
import { harness } from './helpers.js';
import { type HostilePki, makeHostilePki } from './hostile-pki.js';
import { opensslVerify } from './openssl-verify.js';
import { issue, makePki, newKey, type TestCert, type TestPki } from './pki.js';

let pki: TestPki;
let hostile: HostilePki;
beforeAll(async () => {
  pki = await makePki();
  hostile = await makeHostilePki(pki);
});

const chainOf = (...certs: TestCert[]) => certs.map((c) => c.b64);
const sha256Of = (cert: TestCert) => new X509Certificate(cert.der).fingerprint256.replaceAll(':', '').toLowerCase();

function server() {
  return harness({
    authenticators: {
      signed_challenge: signedChallengeAuthenticator(),
      x5c: x5cAuthenticator({ trustAnchors: pki.root.pem }),
    },
  });
}

/** One x5c authentication on a fresh connection and session. */
async function attempt(o: {
  sender: string;
  leaf: TestCert;
  chain?: unknown;
  alg?: JwsAlgorithm;
  signWith?: TestCert;
  signedSender?: string;
  signedSession?: string;
  h?: ReturnType<typeof server>;
}) {
  const h = o.h ?? server();
  const peer = await h.connect();
  const round = await createAs(peer, o.sender);
  const key = (o.signWith ?? o.leaf).key;
  const alg =
    o.alg ??
    (key.kind === 'rsa' ? 'PS256' : key.kind === 'ed25519' ? 'EdDSA' : key.kind === 'p384' ? 'ES384' : 'ES256');
  const signer = await signerOf(key, alg);
  const result = await refusal(
    answerX5c(peer, round, {
      sender: o.sender,
      x5c: o.chain ?? chainOf(o.leaf, pki.intermediate),
      signer,
      ...(o.signedSender ? { signedSender: o.signedSender } : {}),
      ...(o.signedSession ? { signedSession: o.signedSession } : {}),
    }),
  );
  if (result !== 'ok') return result;
  // Authenticated: the session now works for this identity.
  const listed = await refusal(
    peer.request('wmp.capability.list', { wmp: { version: '0.1', session_id: round.sessionId, sender: o.sender } }),
  );
  return listed === 'ok' ? 'ok' : listed;
}

const refused = (reason: string) => ({ code: -31002, data: expect.objectContaining({ reason }) });

describe('the test PKI (checked by node:crypto, independently of pkijs)', () => {
  it('has the names, CA flags and signatures it claims', () => {
    const leaf = new X509Certificate(pki.dnsLeaf.der);
    const intermediate = new X509Certificate(pki.intermediate.der);
    const root = new X509Certificate(pki.root.der);
    expect(leaf.subjectAltName).toBe('DNS:wallet.example.com, DNS:alt.example.com');
    expect([leaf.ca, intermediate.ca, root.ca]).toEqual([false, true, true]);
    expect(leaf.verify(intermediate.publicKey) && intermediate.verify(root.publicKey)).toBe(true);
    expect(new X509Certificate(pki.edLeaf.der).publicKey.asymmetricKeyType).toBe('ed25519');
    expect(new X509Certificate(pki.uriLeaf.der).subjectAltName).toBe('URI:https://issuer.example.eu/wmp');
    expect(Date.parse(new X509Certificate(pki.expiredLeaf.der).validTo)).toBeLessThan(Date.now());
    expect(Date.parse(new X509Certificate(pki.futureLeaf.der).validFrom)).toBeGreaterThan(Date.now());
    expect(new X509Certificate(pki.foreignLeaf.der).verify(intermediate.publicKey)).toBe(false);
  });
});

describe('x5c authentication through a WmpServer', () => {
  it('accepts dNSName, URI and fingerprint senders with P-256, P-384, RSA and Ed25519 leaves', async () => {
    expect(await attempt({ sender: 'x509:san:dns:wallet.example.com', leaf: pki.dnsLeaf })).toBe('ok');
    expect(await attempt({ sender: 'x509:san:dns:alt.example.com', leaf: pki.dnsLeaf })).toBe('ok');
    expect(await attempt({ sender: 'x509:san:uri:https://issuer.example.eu/wmp', leaf: pki.uriLeaf })).toBe('ok');
    expect(
      await attempt({ sender: 'x509:san:uri:https://issuer.example.eu/wmp', leaf: pki.uriLeaf, alg: 'RS256' }),
    ).toBe('ok');
    expect(await attempt({ sender: 'x509:san:dns:ed.example.com', leaf: pki.edLeaf })).toBe('ok');
    expect(await attempt({ sender: 'x509:san:dns:p384.example.com', leaf: pki.p384Leaf })).toBe('ok');
    expect(await attempt({ sender: `x509:sha256:${sha256Of(pki.dnsLeaf)}`, leaf: pki.dnsLeaf })).toBe('ok');
    // The root may be sent too.
    expect(
      await attempt({
        sender: 'x509:san:dns:wallet.example.com',
        leaf: pki.dnsLeaf,
        chain: chainOf(pki.dnsLeaf, pki.intermediate, pki.root),
      }),
    ).toBe('ok');
  });

  it('refuses certificates out of their validity: expired, not_yet_valid', async () => {
    expect(await attempt({ sender: 'x509:san:dns:expired.example.com', leaf: pki.expiredLeaf })).toEqual(
      refused('expired'),
    );
    expect(await attempt({ sender: 'x509:san:dns:future.example.com', leaf: pki.futureLeaf })).toEqual(
      refused('not_yet_valid'),
    );
  });

  it('refuses an expired trust anchor', async () => {
    const oldRoot = await issue({
      subject: 'Old Root',
      key: newKey('p256'),
      ca: true,
      notBefore: new Date(Date.now() - 20 * 86400_000),
      notAfter: new Date(Date.now() - 86400_000),
    });
    const leaf = await issue({
      subject: 'under old',
      key: newKey('p256'),
      issuer: oldRoot,
      dns: ['old.example.com'],
      notAfter: new Date(Date.now() + 86400_000),
    });
    const h = harness({ authenticators: { x5c: x5cAuthenticator({ trustAnchors: [oldRoot.der] }) } });
    expect(await attempt({ h, sender: 'x509:san:dns:old.example.com', leaf, chain: chainOf(leaf) })).toEqual(
      refused('expired'),
    );
  });

  it('refuses chains that do not reach a trust anchor: untrusted_chain', async () => {
    const wallet = 'x509:san:dns:wallet.example.com';
    // Another CA's leaf with the same name, with and without its own root.
    expect(await attempt({ sender: wallet, leaf: pki.foreignLeaf, chain: chainOf(pki.foreignLeaf) })).toEqual(
      refused('untrusted_chain'),
    );
    expect(
      await attempt({ sender: wallet, leaf: pki.foreignLeaf, chain: chainOf(pki.foreignLeaf, pki.foreignRoot) }),
    ).toEqual(refused('untrusted_chain'));
    // An intermediate with our intermediate's name and another key.
    expect(
      await attempt({
        sender: wallet,
        leaf: pki.impostorLeaf,
        chain: chainOf(pki.impostorLeaf, pki.impostorIntermediate),
      }),
    ).toEqual(refused('untrusted_chain'));
    // The intermediate left out.
    expect(await attempt({ sender: wallet, leaf: pki.dnsLeaf, chain: chainOf(pki.dnsLeaf) })).toEqual(
      refused('untrusted_chain'),
    );
  });

  it('refuses an intermediate that is not a CA and a leaf that may not sign', async () => {
    expect(
      await attempt({
        sender: 'x509:san:dns:under.example.com',
        leaf: pki.underNotCa,
        chain: chainOf(pki.underNotCa, pki.notCa, pki.intermediate),
      }),
    ).toEqual({ code: -31002, data: { reason: 'untrusted_chain', detail: 'intermediate_not_ca' } });
    expect(await attempt({ sender: 'x509:san:dns:nosign.example.com', leaf: pki.noSignLeaf })).toEqual({
      code: -31002,
      data: { reason: 'untrusted_chain', detail: 'key_usage' },
    });
  });

  it('judges hostile chains as RFC 5280 says, and as `openssl verify -purpose sslclient` does', async () => {
    const ours: Record<string, unknown> = {};
    const openssl: Record<string, string> = {};
    const expectedOurs: Record<string, unknown> = {};
    const expectedOpenssl: Record<string, string> = {};
    for (const c of hostile.senderCases) {
      const h = harness({ authenticators: { x5c: x5cAuthenticator({ trustAnchors: c.anchors.map((a) => a.pem) }) } });
      const r = await attempt({ h, sender: c.sender, leaf: c.chain[0]!, chain: chainOf(...c.chain) });
      ours[c.name] = r === 'ok' ? 'ok' : r.data;
      expectedOurs[c.name] = c.expected;
      openssl[c.name] = (await opensslVerify(c.chain, c.anchors, 'sslclient')).ok ? 'accepts' : 'refuses';
      expectedOpenssl[c.name] = (c.expected === 'ok') !== (c.opensslAgrees === false) ? 'accepts' : 'refuses';
    }
    expect(ours).toEqual(expectedOurs);
    expect(openssl).toEqual(expectedOpenssl);
  });

  it('refuses a sender the leaf does not name: san_mismatch, fingerprint_mismatch', async () => {
    expect(await attempt({ sender: 'x509:san:dns:other.example.com', leaf: pki.dnsLeaf })).toEqual(
      refused('san_mismatch'),
    );
    expect(await attempt({ sender: 'x509:san:dns:*.example.com', leaf: pki.dnsLeaf })).toEqual({
      code: -31002,
      data: { reason: 'san_mismatch', detail: 'wildcard' },
    });
    expect(await attempt({ sender: 'x509:san:uri:https://issuer.example.eu/other', leaf: pki.uriLeaf })).toEqual(
      refused('san_mismatch'),
    );
    // A URI sender against a leaf with only DNS names.
    expect(await attempt({ sender: 'x509:san:uri:https://wallet.example.com', leaf: pki.dnsLeaf })).toEqual(
      refused('san_mismatch'),
    );
    expect(await attempt({ sender: `x509:sha256:${sha256Of(pki.uriLeaf)}`, leaf: pki.dnsLeaf })).toEqual(
      refused('fingerprint_mismatch'),
    );
    expect(await attempt({ sender: `x509:sha256:${sha256Of(pki.dnsLeaf).toUpperCase()}`, leaf: pki.dnsLeaf })).toEqual(
      refused('fingerprint_mismatch'),
    );
  });

  it('compares dNSNames lower-case: one spelling per identity, a SAN in any case matches it', async () => {
    // An identifier is written lower-case; another spelling would be another identity for the same name.
    for (const sender of ['x509:san:dns:WALLET.example.com', 'x509:san:dns:Alt.Example.Com']) {
      expect(await attempt({ sender, leaf: pki.dnsLeaf })).toEqual({
        code: -31002,
        data: { reason: 'san_mismatch', detail: 'not_lower_case' },
      });
    }
    // The certificate's own spelling does not matter.
    expect(await attempt({ sender: 'x509:san:dns:upper.example.com', leaf: hostile.upperCaseLeaf })).toBe('ok');
    expect(await attempt({ sender: 'x509:san:dns:Upper.Example.COM', leaf: hostile.upperCaseLeaf })).toEqual({
      code: -31002,
      data: { reason: 'san_mismatch', detail: 'not_lower_case' },
    });
  });

  it('never takes a wildcard as an identifier, nor expands a wildcard SAN', async () => {
    const wildcard = { code: -31002, data: { reason: 'san_mismatch', detail: 'wildcard' } };
    // The literal name of a wildcard certificate is no identity.
    expect(await attempt({ sender: 'x509:san:dns:*.example.com', leaf: hostile.wildcardLeaf })).toEqual(wildcard);
    expect(await attempt({ sender: 'x509:san:dns:a.*.example.com', leaf: hostile.wildcardLeaf })).toEqual(wildcard);
    // Nor does the wildcard stand for a name under it.
    expect(await attempt({ sender: 'x509:san:dns:wallet.example.com', leaf: hostile.wildcardLeaf })).toEqual(
      refused('san_mismatch'),
    );
  });

  it('refuses a signature by another key, for another session or sender: bad_signature', async () => {
    const wallet = 'x509:san:dns:wallet.example.com';
    expect(await attempt({ sender: wallet, leaf: pki.dnsLeaf, signWith: pki.relayLeaf })).toEqual(
      refused('bad_signature'),
    );
    expect(await attempt({ sender: wallet, leaf: pki.dnsLeaf, signedSession: 'ses-another' })).toEqual(
      refused('bad_signature'),
    );
    expect(await attempt({ sender: wallet, leaf: pki.dnsLeaf, signedSender: 'x509:san:dns:alt.example.com' })).toEqual(
      refused('bad_signature'),
    );
  });

  it('refuses an algorithm that does not fit the leaf key: unsupported_algorithm', async () => {
    // RSA leaf, ES256 header: the signature is made with a P-256 key so that only the alg is wrong.
    expect(
      await attempt({
        sender: 'x509:san:uri:https://issuer.example.eu/wmp',
        leaf: pki.uriLeaf,
        signWith: pki.dnsLeaf,
        alg: 'ES256',
      }),
    ).toEqual(refused('unsupported_algorithm'));
    expect(
      await attempt({
        sender: 'x509:san:dns:wallet.example.com',
        leaf: pki.dnsLeaf,
        signWith: pki.p384Leaf,
        alg: 'ES384',
      }),
    ).toEqual(refused('unsupported_algorithm'));
    // An HMAC header is never accepted.
    const h = server();
    const peer = await h.connect();
    const round = await createAs(peer, 'x509:san:dns:wallet.example.com');
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', b64: false, crit: ['b64'] })).toString('base64url');
    expect(
      await refusal(
        peer.request('wmp.session.authenticate', {
          wmp: { version: '0.1', session_id: round.sessionId, sender: 'x509:san:dns:wallet.example.com' },
          auth: {
            type: 'x5c',
            x5c: chainOf(pki.dnsLeaf, pki.intermediate),
            challenge: round.challenge,
            signature: `${header}..AAAA`,
            timestamp: new Date().toISOString(),
          },
        }),
      ),
    ).toEqual(refused('unsupported_algorithm'));
  });

  it('refuses garbage, long chains and huge certificates with untrusted_chain, before any signature check', async () => {
    const wallet = 'x509:san:dns:wallet.example.com';
    const leaf = pki.dnsLeaf;
    const detail = async (chain: unknown) => {
      const r = await attempt({ sender: wallet, leaf, chain });
      return r === 'ok' ? r : (r.data as { reason: string; detail?: string });
    };
    expect(await detail(['not base64!'])).toEqual({ reason: 'untrusted_chain', detail: 'malformed_certificate' });
    expect(await detail([Buffer.from('garbage that is no DER').toString('base64')])).toEqual({
      reason: 'untrusted_chain',
      detail: 'malformed_certificate',
    });
    expect(await detail([Buffer.concat([leaf.der, Buffer.from([0])]).toString('base64')])).toEqual({
      reason: 'untrusted_chain',
      detail: 'malformed_certificate',
    });
    expect(await detail([leaf.pem])).toEqual({ reason: 'untrusted_chain', detail: 'malformed_certificate' });
    // A non-string entry does not pass the auth object's schema: invalid params, never an internal error.
    expect(await attempt({ sender: wallet, leaf, chain: [42] })).toMatchObject({ code: -32602 });
    expect(await detail(new Array(20).fill(leaf.b64))).toEqual({ reason: 'untrusted_chain', detail: 'chain_too_long' });
    expect(await detail([Buffer.alloc(64 * 1024, 0x30).toString('base64')])).toEqual({
      reason: 'untrusted_chain',
      detail: 'certificate_too_large',
    });
    expect(await detail([])).toEqual({ reason: 'untrusted_chain', detail: 'x5c_required' });
  });

  it('refuses senders no authenticator proves, and x5c for a DID: unsupported_scheme', async () => {
    const h = server();
    const peer = await h.connect();
    // At create: no authenticator proves x509:dn: or did:web here.
    for (const sender of ['x509:dn:CN=wallet', 'did:web:example.com', 'https://wallet.example.com']) {
      expect(await refusal(createAs(peer, sender))).toEqual(refused('unsupported_scheme'));
    }
    // At authenticate: x5c does not prove a did:key.
    const did = generateKeypair().did;
    const round = await createAs(peer, did);
    expect(
      await refusal(
        answerX5c(peer, round, {
          sender: did,
          x5c: chainOf(pki.dnsLeaf, pki.intermediate),
          signer: await signerOf(pki.dnsLeaf.key, 'ES256'),
        }),
      ),
    ).toEqual(refused('unsupported_scheme'));
  });

  it('advertises exactly the configured schemes', () => {
    expect(server().server.acceptedSchemes).toEqual([
      'did:jwk',
      'did:key',
      'x509:san:dns',
      'x509:san:uri',
      'x509:sha256',
    ]);
    expect(harness().server.acceptedSchemes).toEqual(['did:jwk', 'did:key']);
  });

  it('refuses bad trust anchors when configured', () => {
    expect(() => x5cAuthenticator({ trustAnchors: 'no pem here' })).toThrow(CertificateParseError);
    expect(() => x5cAuthenticator({ trustAnchors: [new Uint8Array([1, 2, 3])] })).toThrow(CertificateParseError);
  });

  it('answers every corrupted certificate with -31002, never an internal error', async () => {
    const authenticator = x5cAuthenticator({ trustAnchors: pki.root.pem });
    const sender = 'x509:san:dns:wallet.example.com';
    const timestamp = nowRfc3339();
    const signature = await signJws(
      challengePayload({ challenge: 'ch-1', sessionId: 'ses-1', sender, timestamp }),
      await signerOf(pki.dnsLeaf.key, 'ES256'),
    );
    const attemptWith = (x5c: string[]) =>
      refusal(
        authenticator.authenticate({
          auth: { type: 'x5c', x5c, challenge: 'ch-1', signature, timestamp },
          sessionId: 'ses-1',
          sender,
          challenge: { value: 'ch-1', expiresAt: Number.POSITIVE_INFINITY },
          timestamp: undefined,
          now: Date.now(),
        }),
      );
    expect(await attemptWith(chainOf(pki.dnsLeaf, pki.intermediate))).toBe('ok');
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const codes = new Set<unknown>();
    for (let i = 0; i < 160; i++) {
      const der = Buffer.from(i % 2 === 0 ? pki.dnsLeaf.der : pki.intermediate.der);
      for (let k = 0; k <= i % 3; k++) {
        const at = next() % der.length;
        der[at] = (der[at] ?? 0) ^ (1 + (next() % 255));
      }
      const chain =
        i % 2 === 0 ? [der.toString('base64'), pki.intermediate.b64] : [pki.dnsLeaf.b64, der.toString('base64')];
      const r = await attemptWith(chain);
      codes.add(r === 'ok' ? 'ok' : r.code);
    }
    expect([...codes]).toEqual([-31002]);
  });
});
