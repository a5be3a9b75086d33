/**
 * `@wmp/session/node`: the parts that need Node (DNS, node:https). The rest of the package is
 * browser-safe.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import { ipLiteralOf, isPrivateAddress } from './auth/addresses.js';
import { type DidDocumentFetcher, DidResolutionError } from './auth/did-web.js';

export interface NodeDidWebFetcherOptions {
  /** Allow loopback and private addresses (tests, private deployments). Default false. */
  readonly allowPrivateAddresses?: boolean;
  /** Extra CA certificates (PEM) to trust for the HTTPS connection, besides Node's own. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** DNS lookup (default node:dns `lookup` with `all: true`). */
  readonly lookup?: (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;
}

async function defaultLookup(hostname: string): Promise<ReadonlyArray<{ address: string; family: number }>> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

/**
 * A did:web fetcher for Node: resolves the host, refuses it unless every address is public (or
 * private addresses are allowed), then connects to the checked address only (the TLS certificate
 * is still verified for the host name), with no redirects and the body cut off past `maxBytes`.
 */
export function nodeDidWebFetcher(options: NodeDidWebFetcherOptions = {}): DidDocumentFetcher {
  const lookupAll = options.lookup ?? defaultLookup;
  return async (url, { signal, maxBytes }) => {
    const host = url.hostname;
    let addresses: ReadonlyArray<{ address: string; family: number }>;
    if (ipLiteralOf(host)) {
      addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
    } else {
      try {
        addresses = await lookupAll(host);
      } catch {
        throw new DidResolutionError('network');
      }
    }
    const first = addresses[0];
    if (!first) throw new DidResolutionError('network');
    if (!options.allowPrivateAddresses && addresses.some((a) => isPrivateAddress(a.address))) {
      throw new DidResolutionError('address_refused');
    }
    if (signal.aborted) throw new DidResolutionError('timeout');
    // Connect to the address we checked, never to a second DNS answer.
    const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
      if (lookupOptions.all) callback(null, [{ address: first.address, family: first.family }]);
      else callback(null, first.address, first.family);
    };
    return new Promise((resolve, reject) => {
      const req = request(
        {
          protocol: 'https:',
          hostname: host,
          port: url.port === '' ? 443 : Number(url.port),
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: { accept: 'application/did+json, application/json' },
          lookup: pinned,
          agent: false,
          signal,
          minVersion: 'TLSv1.2',
          ...(options.ca ? { ca: options.ca as string | Buffer | Array<string | Buffer> } : {}),
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const fail = (reason: 'redirect' | 'too_large' | 'network' | 'timeout') => {
            res.destroy();
            reject(new DidResolutionError(reason));
          };
          if (status >= 300 && status < 400) return fail('redirect');
          if (Number(res.headers['content-length'] ?? 0) > maxBytes) return fail('too_large');
          const chunks: Buffer[] = [];
          let total = 0;
          res.on('data', (chunk: Buffer) => {
            total += chunk.length;
            if (total > maxBytes) fail('too_large');
            else chunks.push(chunk);
          });
          res.on('error', () => fail(signal.aborted ? 'timeout' : 'network'));
          res.on('end', () => {
            const cacheControl = res.headers['cache-control'];
            resolve({
              status,
              cacheControl: typeof cacheControl === 'string' ? cacheControl : null,
              body: new Uint8Array(Buffer.concat(chunks)),
            });
          });
        },
      );
      req.on('error', () => reject(new DidResolutionError(signal.aborted ? 'timeout' : 'network')));
      req.end();
    });
  };
}
