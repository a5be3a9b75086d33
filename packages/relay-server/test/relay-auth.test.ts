// Identifier schemes and authentication at the relay (issue 16), over real TLS sockets: x5c and
// mtls for x509:san:dns senders over WSS and HTTPS + SSE, did:web against a loopback HTTPS host,
// DPoP with its jti in the relay's replay cache, and the relay's own mutual authentication.
import { generateKeypair } from '@wmp/jcs-signing';
import { WmpSession } from '@wmp/session';
import { x509Identity } from '@wmp/session/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DidHost, startDidHost } from '../../session/test/did-host.js';
import { issue, makePki, newKey, type TestCert, type TestPki } from '../../session/test/pki.js';
import { relayAuthenticators } from '../src/node.js';
import { b64url, dpopKit } from './fixtures/dpop-tokens.js';
import { type Binding, connectPeer, startRelay } from './fixtures/relay-clients.js';
import {
  clientCredentials,
  connectTlsPeer,
  relayServerCertificate,
  type TlsCredentials,
} from './fixtures/tls-clients.js';

const ISSUER = 'https://issuer.example';

async function refusalOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return { code: (e as { code?: unknown }).code, data: (e as { data?: unknown }).data };
  }
}

let pki: TestPki;
let serverLeaf: TestCert;
let serverOnlyLeaf: TestCert;
let didHost: DidHost;
let relay: Awaited<ReturnType<typeof startRelay>>;
let strictRelay: Awaited<ReturnType<typeof startRelay>>;
const dpop = dpopKit(ISSUER, 'wmp-relay-test');
const alice = generateKeypair();
const didAt = (path: string) => `did:web:127.0.0.1%3A${didHost.port}:${path}`;

beforeAll(async () => {
  pki = await makePki();
  didHost = await startDidHost();
  const aliceDid = didAt('alice');
  didHost.docs.set('/alice/did.json', {
    id: aliceDid,
    verificationMethod: [
      { id: `${aliceDid}#key-1`, type: 'Multikey', controller: aliceDid, publicKeyMultibase: alice.multikey },
    ],
    authentication: [`${aliceDid}#key-1`],
  });
  const tls = await relayServerCertificate(pki);
  serverLeaf = tls.leaf;
  serverOnlyLeaf = await issue({
    subject: 'server only',
    key: newKey('p256'),
    issuer: pki.intermediate,
    dns: ['server-only.example.com'],
    keyUsage: ['digitalSignature'],
    extKeyUsage: ['serverAuth'],
  });
  const issuerKey = await dpop.issuerKey();
  const common = {
    trustAnchors: pki.root.pem,
    clientCa: pki.root.pem,
    dpop: { key: issuerKey, issuer: ISSUER, audience: 'wmp-relay-test', schemes: ['uri'] },
  };
  relay = await startRelay({
    tls: { cert: tls.cert, key: tls.key, clientCa: pki.root.pem },
    authenticators: await relayAuthenticators({
      ...common,
      didWeb: { allowPrivateAddresses: true, ca: didHost.ca, timeoutMs: 1000 },
    }),
  });
  // The same, with did:web fetches to private addresses refused (the default).
  strictRelay = await startRelay({
    tls: { cert: tls.cert, key: tls.key, clientCa: pki.root.pem },
    authenticators: await relayAuthenticators({ ...common, didWeb: { ca: didHost.ca } }),
  });
}, 120_000);

afterAll(async () => {
  await relay?.relay.close();
  await strictRelay?.relay.close();
  didHost?.server.closeAllConnections();
  didHost?.server.close();
});

const trusting = (): TlsCredentials => ({ ca: pki.root.pem });
const walletIdentity = () =>
  x509Identity({ certificatesPem: pki.dnsLeaf.pem + pki.intermediate.pem, privateKeyPem: pki.dnsLeaf.key.pkcs8Pem });

describe.each<Binding>(['ws', 'http'])('authentication at the relay over %s (TLS at the relay)', (binding) => {
  it('lists exactly what it is configured for in accepted_schemes', async () => {
    const wellKnown = await (await fetchWellKnown(relay.url)).json();
    expect(wellKnown.accepted_schemes).toEqual([
      'did:jwk',
      'did:key',
      'did:web',
      'uri',
      'x509:san:dns',
      'x509:san:uri',
      'x509:sha256',
    ]);
    expect(wellKnown.endpoints.websocket).toMatch(/^wss:\/\//);
  });

  it('authenticates an x509:san:dns sender by x5c and routes its messages', async () => {
    const peer = await connectTlsPeer(relay.url, binding, trusting());
    const session = await WmpSession.open(peer, {
      x509: await walletIdentity(),
      capabilities: { messaging: {}, relay: {} },
    });
    expect(session.sender).toBe('x509:san:dns:wallet.example.com');
    await expect(session.request('wmp.relay.register', {})).resolves.toBeDefined();
    await session.close();
  });

  it('authenticates an x509:san:dns sender by its TLS client certificate (mtls), inline at create', async () => {
    const peer = await connectTlsPeer(relay.url, binding, clientCredentials(pki, pki.dnsLeaf, pki.root.pem));
    const session = await WmpSession.open(peer, {
      // The leaf's second dNSName: any SAN of it may be claimed.
      sender: 'x509:san:dns:alt.example.com',
      auth: { type: 'mtls' },
      capabilities: { messaging: {}, relay: {} },
    });
    expect(session.sender).toBe('x509:san:dns:alt.example.com');
    await expect(session.request('wmp.relay.register', {})).resolves.toBeDefined();
    await session.close();
  });

  it('refuses mtls without a client certificate, with an expired or foreign one, or for a name it lacks', async () => {
    const mtls = async (creds: TlsCredentials, sender: string) =>
      refusalOf(WmpSession.open(await connectTlsPeer(relay.url, binding, creds), { sender, auth: { type: 'mtls' } }));
    const as = (leaf: TestCert) => clientCredentials(pki, leaf, pki.root.pem);
    expect(await mtls(trusting(), 'x509:san:dns:wallet.example.com')).toEqual({
      code: -31002,
      data: { reason: 'untrusted_chain', detail: 'no_client_certificate' },
    });
    expect(await mtls(as(pki.expiredLeaf), 'x509:san:dns:expired.example.com')).toMatchObject({
      code: -31002,
      data: { reason: 'expired' },
    });
    expect(await mtls(as(pki.foreignLeaf), 'x509:san:dns:wallet.example.com')).toMatchObject({
      code: -31002,
      data: { reason: 'untrusted_chain' },
    });
    expect(await mtls(as(pki.dnsLeaf), 'x509:san:dns:bank.example')).toEqual({
      code: -31002,
      data: { reason: 'san_mismatch' },
    });
    // A certificate for servers only (serverAuth), and the relay's own server certificate: no client's.
    const wrongPurpose = { code: -31002, data: { reason: 'untrusted_chain', detail: 'extended_key_usage' } };
    expect(await mtls(as(serverOnlyLeaf), 'x509:san:dns:server-only.example.com')).toEqual(wrongPurpose);
    expect(await mtls(as(serverLeaf), 'x509:san:dns:localhost')).toEqual(wrongPurpose);
    // The relay still serves.
    const ok = await WmpSession.open(await connectTlsPeer(relay.url, binding, as(pki.dnsLeaf)), {
      sender: 'x509:san:dns:wallet.example.com',
      auth: { type: 'mtls' },
    });
    await ok.close();
  });

  it('refuses x5c chains that are not trusted, expired or too long', async () => {
    const x5c = async (leaf: TestCert, sender: string, chain?: readonly string[]) => {
      const identity = await x509Identity({
        certificatesPem: leaf.pem + pki.intermediate.pem,
        privateKeyPem: leaf.key.pkcs8Pem,
      });
      const x509 = chain ? { ...identity, x5c: chain } : identity;
      return refusalOf(WmpSession.open(await connectTlsPeer(relay.url, binding, trusting()), { x509, sender }));
    };
    expect(await x5c(pki.foreignLeaf, 'x509:san:dns:wallet.example.com')).toMatchObject({
      data: { reason: 'untrusted_chain' },
    });
    expect(await x5c(pki.expiredLeaf, 'x509:san:dns:expired.example.com')).toMatchObject({
      data: { reason: 'expired' },
    });
    expect(
      await x5c(
        pki.dnsLeaf,
        'x509:san:dns:wallet.example.com',
        Array.from({ length: 20 }, () => pki.dnsLeaf.b64),
      ),
    ).toEqual({ code: -31002, data: { reason: 'untrusted_chain', detail: 'chain_too_long' } });
    expect(await x5c(pki.dnsLeaf, 'x509:san:dns:wallet.example.com', ['not base64 DER', pki.intermediate.b64])).toEqual(
      { code: -31002, data: { reason: 'untrusted_chain', detail: 'malformed_certificate' } },
    );
  });

  it('authenticates a did:web sender by signed challenge, resolving its document over HTTPS', async () => {
    const did = didAt('alice');
    const signer = { publicKey: alice.publicKey, kid: `${did}#key-1`, sign: alice.sign };
    const session = await WmpSession.open(await connectTlsPeer(relay.url, binding, trusting()), {
      sender: did,
      signer,
    });
    expect(session.sender).toBe(did);
    await session.close();
  });

  it('refuses did:web documents behind a redirect, a host that never answers, 10 MiB, or 127.0.0.1 when not allowed', async () => {
    const attempt = async (url: string, path: string) => {
      const did = didAt(path);
      const signer = { publicKey: alice.publicKey, kid: `${did}#key-1`, sign: alice.sign };
      return refusalOf(WmpSession.open(await connectTlsPeer(url, binding, trusting()), { sender: did, signer }));
    };
    const failed = (detail: string) => ({ code: -31002, data: { reason: 'did_resolution_failed', detail } });
    expect(await attempt(relay.url, 'redirect')).toEqual(failed('redirect'));
    expect(await attempt(relay.url, 'never')).toEqual(failed('timeout'));
    expect(await attempt(relay.url, 'huge')).toEqual(failed('too_large'));
    expect(await attempt(strictRelay.url, 'alice')).toEqual(failed('address_refused'));
  });

  it('takes a DPoP-bound token once per proof: a replayed proof is dpop_replay', async () => {
    const sub = 'https://wallet.example/alice';
    const token = dpop.token(sub);
    const htu = binding === 'ws' ? `${relay.url.replace(/^http/, 'ws')}/wmp` : `${relay.url}/wmp`;
    const proof = dpop.proof(token, htu, `jti-${binding}-${Math.random()}`);
    const open = async () =>
      WmpSession.open(await connectTlsPeer(relay.url, binding, trusting()), {
        sender: sub,
        auth: { type: 'dpop', token, proof },
      });
    const session = await open();
    expect(session.sender).toBe(sub);
    expect(await refusalOf(open())).toEqual({ code: -31002, data: { reason: 'dpop_replay' } });
    const forged = `${proof.slice(0, proof.lastIndexOf('.'))}.${b64url(Buffer.alloc(64, 1))}`;
    expect(
      await refusalOf(
        WmpSession.open(await connectTlsPeer(relay.url, binding, trusting()), {
          sender: sub,
          auth: { type: 'dpop', token, proof: forged },
        }),
      ),
    ).toMatchObject({ code: -31002, data: { reason: 'dpop_invalid' } });
    await session.close();
  });

  it('proves itself as its relay_id when asked (mutual authentication), and a client refuses another key', async () => {
    const wellKnown = await (await fetchWellKnown(relay.url)).json();
    expect(wellKnown.relay_id).toBe(relay.relay.id);
    const me = generateKeypair();
    const session = await WmpSession.open(await connectTlsPeer(relay.url, binding, trusting()), {
      signer: me,
      verifyResponder: { id: wellKnown.relay_id },
    });
    expect(session.sender).toBe(me.did);
    expect(session.responder).toBe(relay.relay.id);
    await session.close();
    // Another relay (another key) answering where this one was expected.
    expect(
      await refusalOf(
        WmpSession.open(await connectTlsPeer(strictRelay.url, binding, trusting()), {
          signer: me,
          verifyResponder: { id: wellKnown.relay_id },
        }),
      ),
    ).toEqual({ code: -31002, data: { reason: 'responder_auth_failed', detail: 'unexpected_responder' } });
  });
});

describe('a relay without TLS or extra authenticators', () => {
  it('advertises did:key and did:jwk only and refuses other schemes as unsupported_scheme', async () => {
    const plain = await startRelay();
    try {
      const wellKnown = await (await fetch(`${plain.url}/.well-known/wmp-configuration`)).json();
      expect(wellKnown.accepted_schemes).toEqual(['did:jwk', 'did:key']);
      const peer = await connectPeer(plain.url, 'ws');
      expect(
        await refusalOf(
          peer.request('wmp.session.create', {
            wmp: { version: '0.1', sender: 'x509:san:dns:wallet.example.com' },
            auth: { type: 'mtls' },
          }),
        ),
      ).toMatchObject({ code: -31002, data: { reason: 'unsupported_scheme' } });
      await peer.close();
    } finally {
      await plain.relay.close();
    }
  });
});

/** The well-known document of an HTTPS relay whose certificate chains to the test root. */
async function fetchWellKnown(url: string): Promise<Response> {
  const { tlsFetch } = await import('./fixtures/tls-clients.js');
  return tlsFetch({ ca: pki.root.pem })(`${url}/.well-known/wmp-configuration`);
}
