/**
 * `@wmp/session/node`: the parts that need Node (DNS, sockets, node:https): the guarded fetcher
 * every fetch on someone else's behalf goes through, and the did:web fetcher on it. The rest of
 * the package is browser-safe.
 */
import { type DidDocumentFetcher, DidResolutionError, type DidResolutionFailure } from './auth/did-web.js';
import { createGuardedFetcher, type GuardedFetcher } from './outbound/guarded-fetcher.js';
import type { ResolveAll } from './outbound/guarded-lookup.js';
import { type OutboundFailure, OutboundFetchError } from './outbound/outbound-errors.js';

export {
  createGuardedFetcher,
  type DocumentRequest,
  type FetchedDocument,
  type GuardedFetch,
  type GuardedFetcher,
  type GuardedFetcherOptions,
} from './outbound/guarded-fetcher.js';
export type { ResolveAll } from './outbound/guarded-lookup.js';
export { type OutboundFailure, OutboundFetchError } from './outbound/outbound-errors.js';

export interface NodeDidWebFetcherOptions {
  /** The guarded fetcher to use (a relay passes its own); else one is made of the options below. */
  readonly fetcher?: GuardedFetcher;
  /** Allow loopback and private addresses (tests, private deployments). Default false. */
  readonly allowPrivateAddresses?: boolean;
  /** Extra CA certificates (PEM) to trust for the HTTPS connection, besides Node's own. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** DNS lookup of every address of a host (default node:dns `lookup` with `all: true`). */
  readonly lookup?: ResolveAll;
}

const DID_REASONS: Readonly<Record<OutboundFailure, DidResolutionFailure>> = {
  not_allowed: 'address_refused',
  address_refused: 'address_refused',
  redirect: 'redirect',
  timeout: 'timeout',
  unreachable: 'network',
  too_large: 'too_large',
};

/**
 * A did:web fetcher for Node on the guarded fetcher: the host's addresses are checked (every one
 * public, unless private addresses are allowed) and the connection goes to a checked address only
 * (the TLS certificate is still verified for the host name), with no redirects and the body cut
 * off past `maxBytes`.
 */
export function nodeDidWebFetcher(options: NodeDidWebFetcherOptions = {}): DidDocumentFetcher {
  const guard =
    options.fetcher ??
    createGuardedFetcher({
      allowPrivate: options.allowPrivateAddresses ?? false,
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.lookup ? { resolveAll: options.lookup } : {}),
    });
  return async (url, { signal, maxBytes }) => {
    try {
      const doc = await guard.fetchDocument(url, {
        maxBytes,
        // The resolver's own timeout aborts `signal`; this one only bounds a fetch nobody aborts.
        timeoutMs: 60_000,
        signal,
        headers: { accept: 'application/did+json, application/json' },
      });
      return { status: doc.status, cacheControl: doc.headers.get('cache-control'), body: doc.body };
    } catch (e) {
      if (e instanceof OutboundFetchError) throw new DidResolutionError(DID_REASONS[e.code]);
      throw new DidResolutionError(signal.aborted ? 'timeout' : 'network');
    }
  };
}
