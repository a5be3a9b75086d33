// The built-in `wmp.resolve` types (core §5.8): `endpoint` (an identifier's well-known WMP
// document), `issuer_metadata` (OpenID4VCI credential issuer metadata) and `vctm` (SD-JWT VC type
// metadata). Documents are fetched only through the injected fetch (on a server: the guarded
// fetcher), https only, and cached, answers and failures alike.
import { InvalidParamsError } from '@wmp/jsonrpc-envelope';
import { DocumentCache } from '../documents/document-cache.js';
import {
  type DocumentFetch,
  DocumentFetchError,
  type DocumentFetchOptions,
  fetchableUrl,
  fetchJsonObject,
} from '../documents/fetch-document.js';
import type { ResolveOutcome, Resolver } from '../services.js';
import { identifierDomain } from './identifier-domain.js';

export interface BuiltInResolverOptions {
  /** For documents of other origins (the guarded fetcher on a server); without it only `local` answers. */
  readonly fetch?: DocumentFetch;
  /** Origins fetched over plain http (tests, closed deployments). */
  readonly httpOrigins?: readonly string[];
  /**
   * `endpoint` answers known here without fetching: a relay's own well-known document for the
   * identities at home on it. Undefined: not known here.
   */
  readonly localEndpoint?: (identifier: string) => Record<string, unknown> | undefined;
  readonly now?: () => number;
}

const WELL_KNOWN = '/.well-known/wmp-configuration';

function outcome(contentType: string, document: Record<string, unknown> | null): ResolveOutcome | null {
  return document === null ? null : { metadata: document, content_type: contentType, body: document };
}

/** An https URL of the request, else -32602 (a resolve never makes us fetch anything else). */
function requestedUrl(uri: string, options: DocumentFetchOptions): URL {
  const url = fetchableUrl(uri, options.httpOrigins);
  if (url === undefined) throw new InvalidParamsError({ reason: 'uri: must be an https URL' });
  return url;
}

/** What one resolver fetches with: the fetch options, and its own cache of what it fetched. */
interface ResolverFetching {
  readonly options: DocumentFetchOptions;
  /**
   * The document at `url` if it is one that `accept` takes; null when the server has none (or did
   * not answer: what is not found is not found, core §5.8), answers and failures kept in the cache.
   */
  document(url: string, accept: (doc: Record<string, unknown>) => boolean): Promise<Record<string, unknown> | null>;
}

function resolverFetching(options: BuiltInResolverOptions): ResolverFetching {
  const fetching: DocumentFetchOptions = {
    fetch: options.fetch,
    ...(options.httpOrigins ? { httpOrigins: options.httpOrigins } : {}),
  };
  const cache = new DocumentCache<Record<string, unknown> | null>(options.now ? { now: options.now } : {});
  return {
    options: fetching,
    document: (url, accept) =>
      cache.get(url, async () => {
        try {
          const doc = await fetchJsonObject(url, fetching);
          return accept(doc) ? doc : null;
        } catch (e) {
          if (e instanceof DocumentFetchError) return null;
          throw e;
        }
      }),
  };
}

/** `endpoint`: the WMP well-known document of an identifier's domain (or known here). */
export function endpointResolver(options: BuiltInResolverOptions): Resolver {
  const fetched = resolverFetching(options);
  return async (uri) => {
    const local = options.localEndpoint?.(uri);
    if (local !== undefined)
      return { ...outcome('application/json', local)!, trust_info: { trusted: true, source: 'local' } };
    const host = identifierDomain(uri);
    if (host === undefined || options.fetch === undefined) return null;
    const origin = (options.httpOrigins ?? []).find((o) => new URL(o).host === host) ?? `https://${host}`;
    const doc = await fetched.document(`${origin}${WELL_KNOWN}`, (d) => Array.isArray(d.supported_versions));
    return outcome('application/json', doc);
  };
}

/** `issuer_metadata`: a credential issuer's `/.well-known/openid-credential-issuer` (its own issuer id inside). */
export function issuerMetadataResolver(options: BuiltInResolverOptions): Resolver {
  const fetched = resolverFetching(options);
  return async (uri) => {
    const url = requestedUrl(uri, fetched.options);
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
    const doc = await fetched.document(
      `${url.origin}/.well-known/openid-credential-issuer${path}`,
      (d) => d.credential_issuer === uri,
    );
    return outcome('application/json', doc);
  };
}

/** `vctm`: the SD-JWT VC type metadata at the type's own URL (its `vct` must be that URL). */
export function vctmResolver(options: BuiltInResolverOptions): Resolver {
  const fetched = resolverFetching(options);
  return async (uri) => {
    const url = requestedUrl(uri, fetched.options);
    const doc = await fetched.document(url.href, (d) => d.vct === uri);
    return outcome('application/vctm+json', doc);
  };
}

/**
 * The built-in resolvers this configuration can answer: `endpoint` always (local answers, and
 * fetched ones with a fetch), `issuer_metadata` and `vctm` only with a fetch.
 */
export function builtInResolvers(options: BuiltInResolverOptions = {}): Record<string, Resolver> {
  return {
    endpoint: endpointResolver(options),
    ...(options.fetch === undefined
      ? {}
      : { issuer_metadata: issuerMetadataResolver(options), vctm: vctmResolver(options) }),
  };
}
