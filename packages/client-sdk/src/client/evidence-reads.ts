import type { Signer } from '@wmp/jcs-signing';
import { parseStrictJson, WmpError } from '@wmp/jsonrpc-envelope';
import { signRequest } from '@wmp/ohan-seal';
import { type FetchLike, readBoundedBody } from '@wmp/transports';
import { WmpClientError } from './errors.js';
import { isRecord, str } from './json-values.js';
import { checkEvidence, servedParts } from './proofs/evidence-checks.js';
import type { MessageChecks } from './proofs/message-checks.js';
import type { ReceivedEvidence } from './proofs/types.js';

/** Where a relay serves its evidence repository (wmp-tables §9). */
const EVIDENCE_PATH = '/evidence';
/** A page is at most 100 records, each with a JWS and a token of at most 64 KiB. */
const MAX_PAGE_BYTES = 16 * 1024 * 1024;
const MAX_JSON_DEPTH = 32;

/**
 * What `WmpClient.evidence` reads: the records of one message (`messageId`), or of one session of
 * this client in a time range (`sessionId`, `since`, `until`); `continuationToken` (from the page
 * before) and `limit` (1..100, default 100) page through them.
 */
export interface EvidenceQuery {
  readonly messageId?: string;
  readonly sessionId?: string;
  readonly since?: Date | string;
  readonly until?: Date | string;
  readonly continuationToken?: string;
  readonly limit?: number;
  readonly signal?: AbortSignal;
  /** Default the client's `requestTimeoutMs`. */
  readonly timeoutMs?: number;
}

/** One page of records, each checked as a notified one is; `continuationToken` when more follow. */
export interface EvidencePage {
  readonly records: readonly ReceivedEvidence[];
  readonly totalCount: number;
  readonly continuationToken: string | undefined;
}

export interface EvidenceReadInput {
  readonly fetch: FetchLike;
  /** The relay's origin: what the request is signed for. */
  readonly origin: string;
  readonly signer: Signer;
  readonly checks: MessageChecks;
  readonly timeoutMs: number;
}

const time = (t: Date | string): string => (typeof t === 'string' ? t : t.toISOString());

/** The path and query of `GET /evidence` for `q`; exactly one of `messageId` and `sessionId`. */
export function evidenceTarget(q: EvidenceQuery): string {
  if ((q.messageId === undefined) === (q.sessionId === undefined))
    throw new WmpClientError('ERR_CLIENT_EVIDENCE_QUERY');
  if (q.messageId !== undefined && (q.since !== undefined || q.until !== undefined)) {
    throw new WmpClientError('ERR_CLIENT_EVIDENCE_QUERY');
  }
  const params = new URLSearchParams();
  if (q.messageId !== undefined) params.set('message_id', q.messageId);
  if (q.sessionId !== undefined) params.set('session_id', q.sessionId);
  if (q.since !== undefined) params.set('since', time(q.since));
  if (q.until !== undefined) params.set('until', time(q.until));
  if (q.continuationToken !== undefined) params.set('continuation_token', q.continuationToken);
  if (q.limit !== undefined) params.set('limit', String(q.limit));
  return `${EVIDENCE_PATH}?${params.toString()}`;
}

/**
 * `GET /evidence` at the relay, signed by the client's key (`Authorization: OHAN-Sig`): the relay
 * serves the records naming that key's `did:key` as a party. A refusal is the relay's `WmpError`
 * (`data.reason`: `not_found`, `query`, `request_signature`, `rate`, ...); an answer that cannot
 * be read, or no answer, is `ERR_CLIENT_EVIDENCE`.
 */
export async function readEvidence(input: EvidenceReadInput, query: EvidenceQuery): Promise<EvidencePage> {
  const target = evidenceTarget(query);
  const timeout = AbortSignal.timeout(query.timeoutMs ?? input.timeoutMs);
  const signal = query.signal ? AbortSignal.any([query.signal, timeout]) : timeout;
  let status: number;
  let value: unknown;
  try {
    const authorization = await signRequest({ signer: input.signer, origin: input.origin, method: 'GET', target });
    const response = await input.fetch(`${input.origin}${target}`, {
      headers: { accept: 'application/json', authorization },
      signal,
    });
    status = response.status;
    const bytes = await readBoundedBody(response.body, MAX_PAGE_BYTES, response.headers.get('content-length'));
    if (bytes === undefined) throw new WmpClientError('ERR_CLIENT_EVIDENCE');
    value = parseStrictJson(new TextDecoder().decode(bytes), { maxBytes: MAX_PAGE_BYTES, maxDepth: MAX_JSON_DEPTH });
  } catch (e) {
    if (query.signal?.aborted) throw query.signal.reason;
    throw e instanceof WmpClientError ? e : new WmpClientError('ERR_CLIENT_EVIDENCE', { cause: e });
  }
  if (status !== 200) {
    const error = isRecord(value) && isRecord(value.error) ? value.error : undefined;
    if (typeof error?.code !== 'number') throw new WmpClientError('ERR_CLIENT_EVIDENCE');
    throw new WmpError(error.code, error.data);
  }
  const page = isRecord(value) ? value : {};
  if (!Array.isArray(page.evidence_records) || typeof page.total_count !== 'number') {
    throw new WmpClientError('ERR_CLIENT_EVIDENCE');
  }
  return {
    records: await Promise.all(page.evidence_records.map((r) => checkEvidence(servedParts(r), input.checks))),
    totalCount: page.total_count,
    continuationToken: str(page.continuation_token),
  };
}
