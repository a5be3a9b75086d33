// The built-in `wmp.resolve` types (core §5.8) through a WmpServer: `endpoint`, `issuer_metadata`
// and `vctm`, fetched through the injected fetch from a local server and cached; what is not
// there is `body: null`; a URL that is not https is -32602 and is never fetched.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInResolvers, type DocumentFetch } from '../src/index.js';
import { refusal } from './auth-helpers.js';
import { harness } from './helpers.js';

let server: Server;
let origin: string;
const requests: string[] = [];
const documents = new Map<string, unknown>();

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const doc = documents.get(req.url ?? '');
    if (doc === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  documents.set('/.well-known/wmp-configuration', {
    supported_versions: ['0.1'],
    endpoints: { websocket: 'wss://x/wmp' },
  });
  documents.set('/.well-known/openid-credential-issuer/tenant', {
    credential_issuer: `${origin}/tenant`,
    credential_endpoint: `${origin}/credential`,
  });
  documents.set('/types/identity', { vct: `${origin}/types/identity`, name: 'Identity' });
  documents.set('/types/liar', { vct: 'https://elsewhere.example/types/liar', name: 'Liar' });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const fetched: DocumentFetch = (url, init) => fetch(url, init);

describe('built-in resolvers', () => {
  it('endpoint, issuer_metadata and vctm answer, cached; unknown and mismatched documents are null', async () => {
    const h = harness({
      capabilities: { messaging: {}, resolve: { supported_types: ['endpoint', 'issuer_metadata', 'vctm'] } },
      resolvers: builtInResolvers({
        fetch: fetched,
        httpOrigins: [origin],
        localEndpoint: (id) =>
          id === 'did:key:zHere' ? { supported_versions: ['0.1'], relay_id: 'did:key:zRelay' } : undefined,
      }),
    });
    const { session } = await h.open({ capabilities: { messaging: {}, resolve: {} } });
    expect(session.capabilities.resolve).toEqual({ supported_types: ['endpoint', 'issuer_metadata', 'vctm'] });
    const resolve = (type: string, uri: string) => session.request('wmp.resolve', { type, uri }) as Promise<any>;

    await expect(resolve('endpoint', 'did:key:zHere')).resolves.toMatchObject({
      metadata: { relay_id: 'did:key:zRelay' },
      trust_info: { trusted: true, source: 'local' },
    });
    const host = new URL(origin).host.replace(':', '%3A');
    const endpoint = await resolve('endpoint', `did:web:${host}`);
    expect(endpoint).toMatchObject({
      content_type: 'application/json',
      body: { endpoints: { websocket: 'wss://x/wmp' } },
    });
    expect(await resolve('endpoint', 'did:key:zNoDomain')).toMatchObject({ metadata: null });

    const issuer = await resolve('issuer_metadata', `${origin}/tenant`);
    expect(issuer).toMatchObject({ type: 'issuer_metadata', body: { credential_endpoint: `${origin}/credential` } });
    const vctm = await resolve('vctm', `${origin}/types/identity`);
    expect(vctm).toMatchObject({ content_type: 'application/vctm+json', metadata: { name: 'Identity' } });
    expect(vctm.body).toEqual(vctm.metadata);
    // Not there, or a document that names another type: nothing found.
    expect(await resolve('vctm', `${origin}/types/none`)).toMatchObject({ metadata: null });
    expect(await resolve('vctm', `${origin}/types/liar`)).toMatchObject({ metadata: null });

    // Answers are cached: asked again, nothing is fetched.
    const before = requests.length;
    await resolve('vctm', `${origin}/types/identity`);
    await resolve('vctm', `${origin}/types/none`);
    expect(requests.length).toBe(before);

    // Only https (or the configured http origins) is fetched.
    expect(await refusal(resolve('vctm', 'http://10.0.0.1/types/x'))).toMatchObject({ code: -32602 });
    expect(await refusal(resolve('smp', 'ebcore:iso6523:0088:1'))).toMatchObject({
      code: -31005,
      data: { type: 'smp' },
    });
  });

  it('without a fetch, only endpoint is offered, answering what is known locally', async () => {
    expect(Object.keys(builtInResolvers({}))).toEqual(['endpoint']);
  });
});
