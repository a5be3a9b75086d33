// Documents fetched on someone's behalf (issuer keys, status lists, type metadata, well-known
// documents): through a fetch the caller injects (on a server, the guarded fetcher), https only,
// no redirects, within a size and a time cap. Browser-safe: nothing here opens a socket itself.
import { fromUtf8 } from '@wmp/jcs-signing';
import { parseStrictJson } from '@wmp/jsonrpc-envelope';
import { readCappedBody } from '../capped-body.js';

/**
 * A `fetch`-like function for documents fetched on someone's behalf. On a server it must be the
 * guarded one (no private addresses after DNS, no redirects, caps); the global `fetch` is fine in
 * a browser. Nothing is fetched without one.
 */
export type DocumentFetch = (
  url: string,
  init: {
    readonly signal: AbortSignal;
    readonly headers: Readonly<Record<string, string>>;
    readonly redirect: 'error';
  },
) => Promise<Response>;

/** Why a document could not be had: stable codes, fixed messages (never the URL or the answer). */
export type DocumentFailure =
  | 'not_allowed'
  | 'no_fetcher'
  | 'unreachable'
  | 'timeout'
  | 'status'
  | 'too_large'
  | 'not_json';

const MESSAGES: Readonly<Record<DocumentFailure, string>> = {
  not_allowed: 'only https is fetched',
  no_fetcher: 'no fetcher is configured',
  unreachable: 'the server could not be reached',
  timeout: 'the server did not answer in time',
  status: 'the server did not answer 200',
  too_large: 'the document is too large',
  not_json: 'the document is not a JSON object',
};

export class DocumentFetchError extends Error {
  readonly code: DocumentFailure;
  constructor(code: DocumentFailure) {
    super(MESSAGES[code]);
    this.name = 'DocumentFetchError';
    this.code = code;
  }
}

export interface DocumentFetchOptions {
  readonly fetch: DocumentFetch | undefined;
  /** Largest body, default 64 KiB. */
  readonly maxBytes?: number;
  /** The whole fetch, body included, default 5 s. */
  readonly timeoutMs?: number;
  /**
   * Origins that may be fetched over plain http (`http://127.0.0.1:8080`), as configured by an
   * operator or a test; every other URL must be https.
   */
  readonly httpOrigins?: readonly string[];
}

export const DEFAULT_DOCUMENT_BYTES = 64 * 1024;
const DEFAULT_TIMEOUT_MS = 5000;

/** The URL if it may be fetched: https (credentials in it refused), or http of a listed origin. */
export function fetchableUrl(text: string, httpOrigins: readonly string[] = []): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '') return undefined;
  if (url.protocol === 'https:') return url;
  return url.protocol === 'http:' && httpOrigins.includes(url.origin) ? url : undefined;
}

/** The body of `url` as text, with its content type. Throws `DocumentFetchError`. */
export async function fetchDocument(
  url: string,
  accept: string,
  options: DocumentFetchOptions,
): Promise<{ readonly text: string; readonly contentType: string | undefined }> {
  const target = fetchableUrl(url, options.httpOrigins);
  if (target === undefined) throw new DocumentFetchError('not_allowed');
  if (options.fetch === undefined) throw new DocumentFetchError('no_fetcher');
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let response: Response;
  try {
    response = await options.fetch(target.href, { signal, headers: { accept }, redirect: 'error' });
  } catch {
    throw new DocumentFetchError(signal.aborted ? 'timeout' : 'unreachable');
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new DocumentFetchError('status');
  }
  const bytes = await readCappedBody(
    response,
    options.maxBytes ?? DEFAULT_DOCUMENT_BYTES,
    signal,
    (failure) => new DocumentFetchError(failure === 'network' ? 'unreachable' : failure),
  );
  let text: string;
  try {
    text = fromUtf8(bytes);
  } catch {
    throw new DocumentFetchError('not_json');
  }
  return { text, contentType: response.headers.get('content-type') ?? undefined };
}

/** A JSON object from `url` (strict JSON, bounded depth). Throws `DocumentFetchError`. */
export async function fetchJsonObject(url: string, options: DocumentFetchOptions): Promise<Record<string, unknown>> {
  const { text } = await fetchDocument(url, 'application/json', options);
  let value: unknown;
  try {
    value = parseStrictJson(text, { maxBytes: options.maxBytes ?? DEFAULT_DOCUMENT_BYTES, maxDepth: 32 });
  } catch {
    throw new DocumentFetchError('not_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DocumentFetchError('not_json');
  return value as Record<string, unknown>;
}
