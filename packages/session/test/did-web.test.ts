import { b64urlEncode, generateKeypair, signChallenge, signMessage, verifyMessage } from '@wmp/jcs-signing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate } from '../../../test-support/gate.js';
import { challengePayload } from '../src/auth/challenge.js';
import { freshnessSeconds } from '../src/auth/did-web.js';
import { signJws } from '../src/auth/jws.js';
import {
  type DidDocumentFetcher,
  DidResolutionError,
  DidWebResolver,
  didWebUrl,
  findVerificationKey,
  parseDidDocument,
  signedChallengeAuthenticator,
  WmpSession,
  webDidFetcher,
} from '../src/index.js';
import { nodeDidWebFetcher } from '../src/node.js';
import { createAs, nowRfc3339, refusal, signerOf } from './auth-helpers.js';
import { type DidHost, startDidHost } from './did-host.js';
import { harness } from './helpers.js';
import { newKey } from './pki.js';

const reasonOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof DidResolutionError) return e.reason;
    throw e;
  }
};

describe('did:web identifiers and documents (pure)', () => {
  it('maps a did:web to its document URL', () => {
    expect(didWebUrl('did:web:example.com').href).toBe('https://example.com/.well-known/did.json');
    expect(didWebUrl('did:web:example.com%3A8443').href).toBe('https://example.com:8443/.well-known/did.json');
    expect(didWebUrl('did:web:example.com:user:alice').href).toBe('https://example.com/user/alice/did.json');
    expect(didWebUrl('did:web:w3c-ccg.github.io:user%20x').href).toBe('https://w3c-ccg.github.io/user%20x/did.json');
    for (const bad of [
      'did:key:z6Mk',
      'did:web:',
      'did:web:exa mple.com',
      'did:web:example.com%2Fx',
      'did:web:user@example.com',
      'did:web:example.com%3A99999',
      'did:web:example.com%3A0',
      'did:web:example.com:..:x',
      'did:web:example.com:a/b',
      'did:web:-example.com',
      `did:web:${'a'.repeat(1100)}`,
    ]) {
      expect(() => didWebUrl(bad), bad).toThrow(DidResolutionError);
    }
  });

  const did = 'did:web:example.com';
  const ed = generateKeypair();
  const doc = (extra: Record<string, unknown> = {}) =>
    parseDidDocument(
      JSON.stringify({
        id: did,
        verificationMethod: [
          { id: '#ed', type: 'Multikey', controller: did, publicKeyMultibase: ed.multikey },
          {
            id: `${did}#p256`,
            type: 'JsonWebKey2020',
            controller: did,
            publicKeyJwk: {
              kty: 'EC',
              crv: 'P-256',
              x: b64urlEncode(new Uint8Array(32).fill(1)),
              y: b64urlEncode(new Uint8Array(32).fill(2)),
            },
          },
          {
            id: '#okp',
            type: 'JsonWebKey2020',
            publicKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: b64urlEncode(ed.publicKey) },
          },
          { id: '#other', type: 'Multikey', controller: 'did:web:evil.example', publicKeyMultibase: ed.multikey },
          { id: '#p384', type: 'JsonWebKey2020', publicKeyJwk: { kty: 'EC', crv: 'P-384', x: 'AA', y: 'AA' } },
          {
            id: '#private',
            type: 'JsonWebKey2020',
            publicKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: b64urlEncode(ed.publicKey), d: 'AA' },
          },
        ],
        authentication: ['#ed', `${did}#p256`, '#other', '#p384', '#private'],
        assertionMethod: ['#okp'],
        ...extra,
      }),
      did,
    );

  it('finds the kid’s verification method: Multikey, Ed25519 JWK, P-256 JWK', () => {
    expect(findVerificationKey(doc(), `${did}#ed`, 'authentication')).toEqual({
      id: `${did}#ed`,
      alg: 'EdDSA',
      jwk: { kty: 'OKP', crv: 'Ed25519', x: b64urlEncode(ed.publicKey) },
    });
    expect(findVerificationKey(doc(), `${did}#p256`, 'authentication').alg).toBe('ES256');
    expect(findVerificationKey(doc(), `${did}#okp`, 'assertionMethod').alg).toBe('EdDSA');
  });

  it('refuses keys not listed for the purpose, of another controller, private, or of other types', () => {
    const fail = (kid: string, rel?: 'authentication' | 'assertionMethod') => {
      try {
        findVerificationKey(doc(), kid, rel);
        return 'ok';
      } catch (e) {
        return (e as DidResolutionError).reason;
      }
    };
    expect(fail(`${did}#okp`, 'authentication')).toBe('unknown_key');
    expect(fail(`${did}#ed`, 'assertionMethod')).toBe('unknown_key');
    expect(fail(`${did}#nope`)).toBe('unknown_key');
    expect(fail(`did:web:other.example#ed`)).toBe('unknown_key');
    expect(fail(`${did}#other`, 'authentication')).toBe('unknown_key');
    expect(fail(`${did}#p384`, 'authentication')).toBe('unsupported_key');
    expect(fail(`${did}#private`, 'authentication')).toBe('invalid_document');
  });

  it('refuses documents of another DID, with duplicate keys, or not JSON', () => {
    expect(() => parseDidDocument('{"id":"did:web:other.example"}', did)).toThrow(DidResolutionError);
    expect(() => parseDidDocument(`{"id":"${did}","id":"${did}"}`, did)).toThrow(DidResolutionError);
    expect(() => parseDidDocument('<html>', did)).toThrow(DidResolutionError);
    expect(() => parseDidDocument(`{"id":"${did}","verificationMethod":{}}`, did)).toThrow(DidResolutionError);
  });

  it('reads HTTP freshness from Cache-Control', () => {
    expect(freshnessSeconds('public, max-age=300')).toBe(300);
    expect(freshnessSeconds('max-age=300, no-store')).toBe(0);
    expect(freshnessSeconds('no-cache')).toBe(0);
    expect(freshnessSeconds(null)).toBe(0);
  });
});

/** A fetcher answering from a table, counting calls. */
function tableFetcher(answers: Record<string, { status?: number; body: unknown; cacheControl?: string }>) {
  const calls: string[] = [];
  const fetcher: DidDocumentFetcher = async (url) => {
    calls.push(url.href);
    const a = answers[url.href];
    if (!a) return { status: 404, cacheControl: null, body: new Uint8Array() };
    return {
      status: a.status ?? 200,
      cacheControl: a.cacheControl ?? null,
      body: new TextEncoder().encode(typeof a.body === 'string' ? a.body : JSON.stringify(a.body)),
    };
  };
  return { fetcher, calls };
}

describe('DidWebResolver', () => {
  const didOf = (n: number) => `did:web:host${n}.example`;
  const docOf = (n: number) => ({ id: didOf(n) });
  const urlOf = (n: number) => `https://host${n}.example/.well-known/did.json`;

  it('caches by max-age, bounded, and refetches when stale', async () => {
    let now = 1_000_000;
    const answers: Record<string, { body: unknown; cacheControl?: string }> = {};
    for (let i = 0; i < 5; i++) answers[urlOf(i)] = { body: docOf(i), cacheControl: 'max-age=60' };
    answers[urlOf(9)] = { body: docOf(9), cacheControl: 'no-store' };
    const { fetcher, calls } = tableFetcher(answers);
    const resolver = new DidWebResolver({ fetcher, maxEntries: 3, now: () => now });
    await resolver.resolve(didOf(0));
    await resolver.resolve(didOf(0));
    expect(calls.length).toBe(1);
    await resolver.resolve(didOf(9));
    await resolver.resolve(didOf(9));
    expect(calls.length).toBe(3);
    for (let i = 1; i < 5; i++) await resolver.resolve(didOf(i));
    expect(resolver.size).toBe(3);
    now += 61_000;
    await resolver.resolve(didOf(4));
    expect(calls.filter((c) => c === urlOf(4)).length).toBe(2);
  });

  it('shares one fetch between concurrent resolutions and bounds fetches in flight', async () => {
    const { opened: released, open: release } = gate();
    let calls = 0;
    const fetcher: DidDocumentFetcher = async (url) => {
      calls++;
      await released;
      return {
        status: 200,
        cacheControl: null,
        body: new TextEncoder().encode(JSON.stringify({ id: `did:web:${url.hostname}` })),
      };
    };
    const resolver = new DidWebResolver({ fetcher, maxConcurrentFetches: 2 });
    const a = resolver.resolve('did:web:a.example');
    const b = resolver.resolve('did:web:a.example');
    const c = resolver.resolve('did:web:c.example');
    expect(await reasonOf(resolver.resolve('did:web:d.example'))).toBe('busy');
    release();
    await Promise.all([a, b, c]);
    expect(calls).toBe(2);
  });

  it('times out a fetcher that never answers, even one that ignores its signal', async () => {
    const never: DidDocumentFetcher = () => new Promise(() => undefined);
    const resolver = new DidWebResolver({ fetcher: never, timeoutMs: 50 });
    expect(await reasonOf(resolver.resolve('did:web:slow.example'))).toBe('timeout');
  });

  it('refuses non-200 answers, redirects and oversized bodies', async () => {
    const { fetcher } = tableFetcher({
      [urlOf(1)]: { status: 302, body: '' },
      [urlOf(2)]: { status: 500, body: '' },
      [urlOf(3)]: { body: 'x'.repeat(70_000) },
    });
    const resolver = new DidWebResolver({ fetcher });
    expect(await reasonOf(resolver.resolve(didOf(1)))).toBe('redirect');
    expect(await reasonOf(resolver.resolve(didOf(2)))).toBe('http_status');
    expect(await reasonOf(resolver.resolve(didOf(3)))).toBe('too_large');
    expect(await reasonOf(resolver.resolve(didOf(4)))).toBe('http_status');
  });

  it('webDidFetcher: no redirects followed, bodies capped while streaming, local hosts refused', async () => {
    const seen: RequestInit[] = [];
    const fakeFetch = (async (_url: URL, init: RequestInit) => {
      seen.push(init);
      const path = _url.pathname;
      if (path.startsWith('/redirect')) return new Response(null, { status: 307, headers: { location: 'https://x/' } });
      if (path.startsWith('/declared')) return new Response('{}', { headers: { 'content-length': '999999' } });
      if (path.startsWith('/stream')) {
        const chunk = new Uint8Array(16 * 1024);
        let sent = 0;
        return new Response(
          new ReadableStream({
            pull(controller) {
              sent++;
              if (sent > 640) controller.close();
              else controller.enqueue(chunk);
            },
          }),
        );
      }
      return new Response(JSON.stringify({ id: 'did:web:ok.example' }), { headers: { 'cache-control': 'max-age=5' } });
    }) as unknown as typeof fetch;
    const resolver = new DidWebResolver({ fetcher: webDidFetcher({ fetch: fakeFetch }) });
    expect(await reasonOf(resolver.resolve('did:web:ok.example'))).toBe('ok');
    expect(seen[0]!.redirect).toBe('manual');
    expect(await reasonOf(resolver.resolve('did:web:x.example:redirect'))).toBe('redirect');
    expect(await reasonOf(resolver.resolve('did:web:x.example:declared'))).toBe('too_large');
    expect(await reasonOf(resolver.resolve('did:web:x.example:stream'))).toBe('too_large');
    expect(await reasonOf(resolver.resolve('did:web:127.0.0.1'))).toBe('address_refused');
    expect(await reasonOf(resolver.resolve('did:web:localhost'))).toBe('address_refused');
    expect(await reasonOf(resolver.resolve('did:web:2130706433'))).toBe('address_refused'); // 127.0.0.1 as a number
  });
});

describe('did:web over a loopback HTTPS server (node fetcher)', () => {
  let host: DidHost;
  const alice = generateKeypair();
  const bobKey = newKey('p256');
  beforeAll(async () => {
    host = await startDidHost();
    const aliceDid = didAt('alice');
    host.docs.set('/alice/did.json', {
      id: aliceDid,
      verificationMethod: [
        { id: `${aliceDid}#key-1`, type: 'Multikey', controller: aliceDid, publicKeyMultibase: alice.multikey },
      ],
      authentication: [`${aliceDid}#key-1`],
      assertionMethod: [`${aliceDid}#key-1`],
    });
    const bobDid = didAt('bob');
    const jwk = bobKey.publicKey.export({ format: 'jwk' });
    host.docs.set('/bob/did.json', {
      id: bobDid,
      verificationMethod: [
        {
          id: '#k',
          type: 'JsonWebKey2020',
          controller: bobDid,
          publicKeyJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y },
        },
      ],
      authentication: ['#k'],
    });
  });
  afterAll(async () => {
    host.server.closeAllConnections();
    host.server.close();
  });

  const didAt = (path: string) => `did:web:127.0.0.1%3A${host.port}:${path}`;
  const resolverOf = (o: { allow?: boolean; ca?: boolean; timeoutMs?: number } = {}) =>
    new DidWebResolver({
      fetcher: nodeDidWebFetcher({
        allowPrivateAddresses: o.allow ?? true,
        ...(o.ca === false ? {} : { ca: host.ca }),
      }),
      timeoutMs: o.timeoutMs ?? 5000,
    });

  it('authenticates a did:web sender with an Ed25519 key (Multikey) through a WmpServer', async () => {
    const did = didAt('alice');
    const resolver = resolverOf();
    const h = harness({ authenticators: { signed_challenge: signedChallengeAuthenticator({ didWeb: resolver }) } });
    expect(h.server.acceptedSchemes).toEqual(['did:jwk', 'did:key', 'did:web']);
    const signer = { publicKey: alice.publicKey, kid: `${did}#key-1`, sign: alice.sign };
    const session = await WmpSession.open(await h.connect(), { sender: did, signer });
    await expect(session.request('wmp.capability.list')).resolves.toBeDefined();
    // The same resolver finds the key of a non-repudiation signature's kid (core §7.5.4).
    const signed = await signMessage({ jsonrpc: '2.0', method: 'x', params: { wmp: { sender: did }, a: 1 } }, signer);
    await expect(
      verifyMessage(signed, { resolver: resolver.keyResolver(), signer: did, required: true }),
    ).resolves.toMatchObject({
      kid: `${did}#key-1`,
    });
    // A second session reuses the cached document (max-age=300).
    const before = host.requests;
    await WmpSession.open(await h.connect(), { sender: did, signer });
    expect(host.requests).toBe(before);
  });

  it('authenticates a did:web sender with a P-256 JWK (ES256)', async () => {
    const key = bobKey;
    const did = didAt('bob');
    const h = harness({ authenticators: { signed_challenge: signedChallengeAuthenticator({ didWeb: resolverOf() }) } });
    const peer = await h.connect();
    const round = await createAs(peer, did);
    const timestamp = nowRfc3339();
    const es256 = { ...(await signerOf(key, 'ES256')), kid: `${did}#k` };
    const signature = await signJws(
      challengePayload({ challenge: round.challenge, sessionId: round.sessionId, sender: did, timestamp }),
      es256,
    );
    const auth = { type: 'signed_challenge', challenge: round.challenge, signature, timestamp };
    await expect(
      peer.request('wmp.session.authenticate', {
        wmp: { version: '0.1', session_id: round.sessionId, sender: did },
        auth,
      }),
    ).resolves.toMatchObject({ participant_id: did });
    // The same key under another algorithm, or an Ed25519 signature for that kid, is refused.
    const round2 = await createAs(peer, did);
    const wrongAlg = await signChallenge(
      { challenge: round2.challenge, session_id: round2.sessionId, sender: did, timestamp },
      { ...generateKeypair(), kid: `${did}#k` },
    );
    expect(
      await refusal(
        peer.request('wmp.session.authenticate', {
          wmp: { version: '0.1', session_id: round2.sessionId, sender: did },
          auth: { type: 'signed_challenge', challenge: round2.challenge, signature: wrongAlg, timestamp },
        }),
      ),
    ).toEqual({ code: -31002, data: { reason: 'unsupported_algorithm' } });
  });

  /** A did:web signed_challenge attempt whose document is at `path`; the refusal's data. */
  async function failure(path: string, resolver: DidWebResolver) {
    const someone = generateKeypair(); // not the key of any document
    const did = didAt(path);
    const h = harness({ authenticators: { signed_challenge: signedChallengeAuthenticator({ didWeb: resolver }) } });
    const r = await refusal(
      WmpSession.open(await h.connect(), {
        sender: did,
        signer: { publicKey: someone.publicKey, kid: `${did}#key-1`, sign: someone.sign },
      }),
    );
    return r === 'ok' ? r : r.data;
  }

  it('refuses a redirect, a server that never answers, a 10 MiB answer, an unknown key: did_resolution_failed', async () => {
    expect(await failure('redirect', resolverOf())).toEqual({ reason: 'did_resolution_failed', detail: 'redirect' });
    expect(await failure('never', resolverOf({ timeoutMs: 200 }))).toEqual({
      reason: 'did_resolution_failed',
      detail: 'timeout',
    });
    expect(await failure('huge', resolverOf())).toEqual({ reason: 'did_resolution_failed', detail: 'too_large' });
    expect(await failure('missing', resolverOf())).toEqual({ reason: 'did_resolution_failed', detail: 'http_status' });
    // The document names no #key-1, or another key under it.
    expect(await failure('bob', resolverOf())).toEqual({ reason: 'did_resolution_failed', detail: 'unknown_key' });
    expect(await failure('alice', resolverOf())).toEqual({ reason: 'bad_signature' });
  });

  it('refuses 127.0.0.1 unless allowed, and a host that resolves to a private address', async () => {
    expect(await failure('alice', resolverOf({ allow: false }))).toEqual({
      reason: 'did_resolution_failed',
      detail: 'address_refused',
    });
    const rebinding = new DidWebResolver({
      fetcher: nodeDidWebFetcher({
        lookup: async () => [
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.7', family: 4 },
        ],
      }),
    });
    expect(await reasonOf(rebinding.resolve('did:web:public.example'))).toBe('address_refused');
  });

  it('refuses a server whose certificate it does not trust', async () => {
    expect(await failure('alice', resolverOf({ ca: false }))).toEqual({
      reason: 'did_resolution_failed',
      detail: 'network',
    });
  });
});
