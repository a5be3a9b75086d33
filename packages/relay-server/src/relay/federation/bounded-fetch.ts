import { readCappedBody } from '@wmp/session';
import { relayOriginOf } from './federation-config.js';

/** Why a document could not be fetched; stable codes, fixed messages (never the URL or content). */
export type FetchFailure = 'not_allowed' | 'unreachable' | 'timeout' | 'status' | 'too_large' | 'not_json';

const MESSAGES: Readonly<Record<FetchFailure, string>> = {
  not_allowed: 'only https (or http on loopback) is fetched',
  unreachable: 'the server could not be reached',
  timeout: 'the server did not answer in time',
  status: 'the server did not answer 200',
  too_large: 'the document is too large',
  not_json: 'the document is not a JSON object',
};

export class FederationFetchError extends Error {
  readonly code: FetchFailure;
  constructor(code: FetchFailure) {
    super(MESSAGES[code]);
    this.name = 'FederationFetchError';
    this.code = code;
  }
}

export interface BoundedFetchOptions {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** POST this JSON body instead of a GET. */
  readonly body?: unknown;
}

/**
 * A JSON object from `url`, within a time limit and a size cap, https only (http on loopback):
 * what a relay fetches from servers it does not control (well-known documents, cards), so no
 * answer can hold it or its memory. Redirects are not followed.
 */
export async function fetchJsonObject(url: string, options: BoundedFetchOptions): Promise<Record<string, unknown>> {
  if (relayOriginOf(url) === undefined || url.startsWith('ws')) throw new FederationFetchError('not_allowed');
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await options.fetch(url, {
      signal,
      redirect: 'error',
      ...(options.body === undefined
        ? {}
        : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(options.body) }),
    });
  } catch {
    throw new FederationFetchError(signal.aborted ? 'timeout' : 'unreachable');
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new FederationFetchError('status');
  }
  const bytes = await readCappedBody(
    response,
    options.maxBytes,
    signal,
    (failure) => new FederationFetchError(failure === 'network' ? 'unreachable' : failure),
  );
  const text = new TextDecoder().decode(bytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new FederationFetchError('not_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new FederationFetchError('not_json');
  return value as Record<string, unknown>;
}
