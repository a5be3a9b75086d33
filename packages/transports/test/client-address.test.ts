import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { attachWebSocketServer, clientAddress, trustedProxySet } from '../src/node.js';

const proxies = trustedProxySet(['10.0.0.2', '::ffff:10.0.0.3']);

describe('clientAddress: the client behind trusted proxies', () => {
  it('is the socket peer when no proxy is trusted, or the peer is not one', () => {
    expect(clientAddress('203.0.113.7', '198.51.100.1', new Set())).toBe('203.0.113.7');
    expect(clientAddress('203.0.113.7', '198.51.100.1', proxies)).toBe('203.0.113.7');
    expect(clientAddress(undefined, '198.51.100.1', proxies)).toBeUndefined();
  });

  it('walks X-Forwarded-For from the right past trusted proxies, never past the first that is not one', () => {
    expect(clientAddress('10.0.0.2', '198.51.100.1', proxies)).toBe('198.51.100.1');
    expect(clientAddress('::ffff:10.0.0.2', '198.51.100.1', proxies)).toBe('198.51.100.1');
    // Two proxies in a row; what the client wrote itself (the left entry) is not believed.
    expect(clientAddress('10.0.0.2', '1.2.3.4, 198.51.100.1, 10.0.0.3', proxies)).toBe('198.51.100.1');
    // Every hop trusted: the leftmost.
    expect(clientAddress('10.0.0.2', '10.0.0.3', proxies)).toBe('10.0.0.3');
  });

  it('stops at the proxy for a missing, malformed or oversized header', () => {
    expect(clientAddress('10.0.0.2', undefined, proxies)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', 'not-an-ip', proxies)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', '198.51.100.1, <script>', proxies)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', `${'1.1.1.1,'.repeat(200)}198.51.100.1`, proxies)).toBe('10.0.0.2');
  });
});

describe('attachWebSocketServer with trustedProxies', () => {
  it("gives a connection from a trusted proxy the forwarded address, and anyone else's its own", async () => {
    const http = createServer((_req, res) => res.writeHead(404).end());
    const seen: (string | undefined)[] = [];
    const ws = attachWebSocketServer(http, {
      trustedProxies: trustedProxySet(['127.0.0.1']),
      onTransport: (t) => {
        seen.push(t.remoteAddress);
        void t.close();
      },
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
    const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/wmp`;
    const open = (headers: Record<string, string>) =>
      new Promise<void>((resolve, reject) => {
        const socket = new WebSocket(url, 'wmp.v1', { headers });
        socket.once('close', () => resolve());
        socket.once('error', reject);
      });
    await open({ 'x-forwarded-for': '198.51.100.9' });
    await open({});
    expect(seen).toEqual(['198.51.100.9', '127.0.0.1']);
    await ws.close();
    await new Promise<void>((r) => http.close(() => r()));
  });
});
