import { createServer, type Server } from 'node:http';
import { get } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf } from '../../../test-support/code-of.js';
import { createGuardedFetcher, OutboundFetchError, type ResolveAll } from '../src/node.js';

/** A plain HTTP server on 127.0.0.1 that counts requests: `/doc` a JSON document, `/moved` a redirect, `/never` no answer, `/huge` 1 MiB. */
let server: Server;
let port = 0;
let requests = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    if (req.url === '/moved') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
      res.end();
    } else if (req.url === '/never') {
      // never answers
    } else if (req.url === '/huge') {
      res.writeHead(200);
      res.end(Buffer.alloc(1024 * 1024, 0x20));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** Every name "resolves" to the loopback server: what a hostile DNS answer would do. */
const toLoopback: ResolveAll = async () => [{ address: '127.0.0.1', family: 4 }];

const doc = { maxBytes: 4096, timeoutMs: 2000 };

describe('the guarded fetcher', () => {
  it('refuses plain http, loopback, private and metadata addresses by default, before any connection', async () => {
    const guard = createGuardedFetcher({ resolveAll: toLoopback });
    const before = requests;
    expect(await codeOf(guard.fetchDocument(`http://127.0.0.1:${port}/doc`, doc), OutboundFetchError)).toBe(
      'not_allowed',
    );
    expect(await codeOf(guard.fetchDocument(`https://127.0.0.1:${port}/doc`, doc), OutboundFetchError)).toBe(
      'address_refused',
    );
    expect(await codeOf(guard.fetchDocument(`https://[::1]:${port}/doc`, doc), OutboundFetchError)).toBe(
      'address_refused',
    );
    expect(await codeOf(guard.fetchDocument('https://169.254.169.254/latest/meta-data', doc), OutboundFetchError)).toBe(
      'address_refused',
    );
    expect(await codeOf(guard.fetchDocument('https://10.1.2.3/', doc), OutboundFetchError)).toBe('address_refused');
    expect(await codeOf(guard.fetchDocument('https://[fd00::1]/', doc), OutboundFetchError)).toBe('address_refused');
    expect(await codeOf(guard.fetchDocument('https://[::ffff:127.0.0.1]/', doc), OutboundFetchError)).toBe(
      'address_refused',
    );
    // A name is judged by the address it resolves to, and the connection goes to that address only.
    expect(await codeOf(guard.fetchDocument(`https://rebound.example:${port}/doc`, doc), OutboundFetchError)).toBe(
      'address_refused',
    );
    expect(await codeOf(guard.fetchDocument('ftp://relay.example/', doc), OutboundFetchError)).toBe('not_allowed');
    expect(await codeOf(guard.fetchDocument('https://user:pw@relay.example/', doc), OutboundFetchError)).toBe(
      'not_allowed',
    );
    expect(requests).toBe(before);
  });

  it('with private peers allowed: http only to a loopback address, `127.attacker.example` is no loopback', async () => {
    const publicDns: ResolveAll = async () => [{ address: '93.184.216.34', family: 4 }];
    const guard = createGuardedFetcher({ allowPrivate: true, resolveAll: publicDns });
    const got = await guard.fetchDocument(`http://127.0.0.1:${port}/doc`, doc);
    expect(got.status).toBe(200);
    expect(JSON.parse(new TextDecoder().decode(got.body))).toEqual({ ok: true });
    // The name looks like loopback, the address it resolves to is not: no plain http to it.
    expect(await codeOf(guard.fetchDocument(`http://127.attacker.example:${port}/doc`, doc), OutboundFetchError)).toBe(
      'address_refused',
    );
    const toPrivate: ResolveAll = async () => [{ address: '10.0.0.7', family: 4 }];
    const privateGuard = createGuardedFetcher({ allowPrivate: true, resolveAll: toPrivate });
    expect(await codeOf(privateGuard.fetchDocument('http://intranet.example/', doc), OutboundFetchError)).toBe(
      'address_refused',
    );
  });

  it('reaches an origin the operator configured as given, and only that origin', async () => {
    const trusted = `http://127.0.0.1:${port}`;
    const guard = createGuardedFetcher({ trusted: (o) => o === trusted, resolveAll: toLoopback });
    expect((await guard.fetchDocument(`${trusted}/doc`, doc)).status).toBe(200);
    expect(guard.permits(`${trusted}/wmp`)).toBe(true);
    expect(guard.permits(`ws://127.0.0.1:${port}/wmp`)).toBe(true);
    expect(await codeOf(guard.fetchDocument(`http://127.0.0.1:${port + 1}/doc`, doc), OutboundFetchError)).toBe(
      'not_allowed',
    );
    expect(guard.permits(`http://127.0.0.1:${port + 1}`)).toBe(false);
  });

  it('follows no redirect, cuts a large answer, gives up on a server that never answers', async () => {
    const guard = createGuardedFetcher({ allowPrivate: true });
    expect(await codeOf(guard.fetchDocument(`http://127.0.0.1:${port}/moved`, doc), OutboundFetchError)).toBe(
      'redirect',
    );
    expect(await codeOf(guard.fetchDocument(`http://127.0.0.1:${port}/huge`, doc), OutboundFetchError)).toBe(
      'too_large',
    );
    expect(
      await codeOf(
        guard.fetchDocument(`http://127.0.0.1:${port}/never`, { ...doc, timeoutMs: 200 }),
        OutboundFetchError,
      ),
    ).toBe('timeout');
    const short = createGuardedFetcher({ allowPrivate: true, timeoutMs: 200 });
    expect(await codeOf(short.fetch(`http://127.0.0.1:${port}/never`), OutboundFetchError)).toBe('timeout');
  });

  it('gives a socket client (a WebSocket to a peer) the checking lookup: a refused address is never connected to', async () => {
    const guard = createGuardedFetcher({ resolveAll: toLoopback });
    expect(() => guard.socketOptions(`wss://127.0.0.1:${port}/wmp`)).toThrow(OutboundFetchError);
    expect(() => guard.socketOptions('ws://relay.example/wmp')).toThrow(OutboundFetchError);
    const before = requests;
    const url = `wss://rebound.example:${port}/wmp`;
    // What `ws` does with these options: an https upgrade request, looked up through `lookup`.
    const req = get(url.replace('wss:', 'https:'), { ...guard.socketOptions(url), agent: false });
    const error = await new Promise<Error>((resolve) => req.on('error', resolve));
    expect(error).toBeInstanceOf(OutboundFetchError);
    expect((error as OutboundFetchError).code).toBe('address_refused');
    expect(requests).toBe(before);
  });
});
