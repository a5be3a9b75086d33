// A loopback HTTPS server for did:web tests (session and relay): its own CA, DID documents by
// path, and paths that misbehave (redirect, never answer, 10 MiB).
import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { issue, newKey, type TestCert } from './pki.js';

/** A loopback HTTPS server with its own CA, serving DID documents and misbehaving on some paths. */
export interface DidHost {
  readonly port: number;
  readonly ca: string;
  readonly server: Server;
  readonly docs: Map<string, unknown>;
  requests: number;
}

export async function startDidHost(): Promise<DidHost> {
  const caCert = await issue({ subject: 'did host CA', key: newKey('p256'), ca: true, keyUsage: ['keyCertSign'] });
  const tlsCert: TestCert = await issue({
    subject: 'localhost',
    key: newKey('p256'),
    issuer: caCert,
    dns: ['localhost'],
    ips: ['127.0.0.1'],
    keyUsage: ['digitalSignature'],
  });
  const docs = new Map<string, unknown>();
  const host = { ca: caCert.pem, docs, requests: 0 } as { -readonly [K in keyof DidHost]: DidHost[K] };
  const server = createServer({ key: tlsCert.key.pkcs8Pem, cert: tlsCert.pem }, (req, res) => {
    host.requests++;
    res.on('error', () => undefined);
    const path = req.url ?? '/';
    if (path.startsWith('/redirect/')) {
      res.writeHead(302, { location: '/ok/did.json' }).end();
      return;
    }
    if (path.startsWith('/never/')) return; // accepts, never answers
    if (path.startsWith('/huge/')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 10; i++) res.write(chunk);
      res.end();
      return;
    }
    const doc = docs.get(path);
    if (doc === undefined) {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/did+json', 'cache-control': 'max-age=300' })
      .end(JSON.stringify(doc));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  host.server = server;
  host.port = (server.address() as AddressInfo).port;
  return host;
}
