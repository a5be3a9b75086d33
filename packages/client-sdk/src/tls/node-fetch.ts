// Node only. A `fetch` over node:http and node:https, for two reasons:
// - TLS options: Node's global fetch takes no CA or client certificate;
// - a server that accepts the connection and closes it at once (a balancer in front of a dead
//   node) makes Node 20's global fetch wait forever; node:http reports ECONNRESET.
// It does what the SDK's calls need: a method, headers, a string or byte body, an abort signal,
// a streamed response body. It follows no redirects (a 3xx is returned as it is: a relay's API
// does not redirect, and signed box requests name their origin), and decompresses nothing (it
// asks for no encoding).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import type { FetchLike } from '@wmp/transports';
import type { TlsOptions } from './options.js';

/** The options node:https and ws take for `tls`: Node's roots plus the extra CA, and the client certificate. */
export function nodeTlsConnectOptions(tls: TlsOptions = {}): { ca?: string[]; cert?: string; key?: string } {
  return {
    ...(tls.ca !== undefined ? { ca: [...rootCertificates, tls.ca] } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {}),
  };
}

function bodyBytes(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('nodeFetch takes a string or bytes as the body');
}

function responseHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  return headers;
}

/** Statuses whose response has no body (a `Response` refuses one). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for the SDK's calls from Node, with `tls` (a CA to trust, a client certificate) on
 * every `https:` request. Connections are kept alive and reused. Failures reject like the
 * global fetch's: a `TypeError` whose `cause` is the network or TLS error (its `code` says which).
 */
export function nodeFetch(tls: TlsOptions = {}): FetchLike {
  const http = new HttpAgent({ keepAlive: true });
  const https = new HttpsAgent({ keepAlive: true, ...nodeTlsConnectOptions(tls) });
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        reject(new TypeError(`nodeFetch: unsupported URL scheme ${url.protocol}`));
        return;
      }
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let body: Buffer | undefined;
      try {
        body = bodyBytes(init.body);
      } catch (error) {
        reject(error);
        return;
      }
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      if (body !== undefined) headers['content-length'] = String(body.length);
      const method = (init.method ?? 'GET').toUpperCase();
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method, headers, agent: url.protocol === 'https:' ? https : http }, (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          res.destroy();
          reject(new TypeError('fetch failed', { cause: new Error(`unexpected HTTP status ${status}`) }));
          return;
        }
        const stream =
          method === 'HEAD' || NO_BODY.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        if (stream === null) res.resume();
        resolve(new Response(stream, { status, statusText: res.statusMessage ?? '', headers: responseHeaders(res) }));
      });
      const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      req.once('close', () => signal?.removeEventListener('abort', onAbort));
      req.once('error', (error) => {
        // Before the response only; after it, the body stream carries the error.
        reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
      });
      req.end(body);
    });
}
