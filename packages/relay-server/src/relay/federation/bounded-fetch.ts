import type { GuardedFetcher } from '@wmp/session/node';
import { RelayServerError } from '../../errors.js';

/** Why a document could not be fetched; stable codes, fixed messages (never the URL or content). */
export type FetchFailure = 'not_allowed' | 'unreachable' | 'timeout' | 'status' | 'too_large' | 'not_json';

const MESSAGES: Readonly<Record<FetchFailure, string>> = {
  not_allowed: 'the server is not one that is fetched',
  unreachable: 'the server could not be reached',
  timeout: 'the server did not answer in time',
  status: 'the server did not answer 200',
  too_large: 'the document is too large',
  not_json: 'the document is not a JSON object',
};

/** A document federation could not fetch; one of the package's errors, `code` says which case. */
export class FederationFetchError extends RelayServerError {
  declare readonly code: FetchFailure;
  constructor(code: FetchFailure) {
    super(code, MESSAGES[code]);
    this.name = 'FederationFetchError';
  }
}

/** The guarded fetcher's failures as federation reports them (a redirect is an answer that is not 200). */
const FROM_GUARD: Readonly<Record<string, FetchFailure>> = {
  not_allowed: 'not_allowed',
  address_refused: 'not_allowed',
  redirect: 'status',
  timeout: 'timeout',
  unreachable: 'unreachable',
  too_large: 'too_large',
};

export interface BoundedFetchOptions {
  /** The guarded fetcher (https only, no private addresses, no redirects: docs/federation-profile.md). */
  readonly fetcher: GuardedFetcher | undefined;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** POST this JSON body instead of a GET. */
  readonly body?: unknown;
}

/**
 * A JSON object from `url` through the guarded fetcher, within a time limit and a size cap: what
 * a relay fetches from servers it does not control (well-known documents, cards), so no answer
 * can hold it or its memory, and no client can make it reach an address inside its network.
 */
export async function fetchJsonObject(url: string, options: BoundedFetchOptions): Promise<Record<string, unknown>> {
  const fetcher = options.fetcher;
  if (fetcher === undefined) throw new RangeError('federation needs a fetcher (createRelay brings one)');
  let doc: Awaited<ReturnType<GuardedFetcher['fetchDocument']>>;
  try {
    doc = await fetcher.fetchDocument(url, {
      maxBytes: options.maxBytes,
      timeoutMs: options.timeoutMs,
      headers:
        options.body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
      ...(options.body === undefined ? {} : { method: 'POST', body: JSON.stringify(options.body) }),
    });
  } catch (e) {
    throw new FederationFetchError(FROM_GUARD[(e as { code?: string }).code ?? ''] ?? 'unreachable');
  }
  if (doc.status !== 200) throw new FederationFetchError('status');
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(doc.body));
  } catch {
    throw new FederationFetchError('not_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new FederationFetchError('not_json');
  return value as Record<string, unknown>;
}
