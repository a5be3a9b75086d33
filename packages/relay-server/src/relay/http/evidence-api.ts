import { type ReplayCache, ReplayCacheFullError } from '@wmp/jcs-signing';
import { ErrorCode, type ErrorCodeValue, ErrorMessage } from '@wmp/jsonrpc-envelope';
import { OHAN_SKEW_SECONDS, REQUEST_AUTH_SCHEME, verifyRequest } from '@wmp/ohan-seal';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { requestTarget } from '../../box-api/auth.js';
import type { RateLimiter } from '../../coordination/contracts/rate-limiter.js';
import type {
  EvidenceEntry,
  EvidencePage,
  EvidenceQuery,
  EvidenceStore,
} from '../../storage/contracts/evidence-store.js';
import { isStoreUnavailable, StoreInputError } from '../../storage/errors.js';
import type { Logger } from '../support/logger.js';

/** Where the repository is served (wmp-tables §9). */
export const EVIDENCE_PATH = '/evidence';
/** Records one page holds at most (and by default). */
export const MAX_EVIDENCE_PAGE = 100;

export interface EvidenceApiInput {
  readonly store: EvidenceStore;
  /** The relay's public origin: what requests are signed for. */
  readonly origin: () => string;
  /** Request nonces (the coordination's, shared with the box: one use per signer and nonce). */
  readonly nonces: ReplayCache;
  /** Requests per key, and per source. */
  readonly perKey: RateLimiter;
  readonly perSource: RateLimiter;
  /** The client address a request is limited by (undefined: not limited, e.g. loopback). */
  readonly sourceOf: (c: Context) => string | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

/** A refusal of the repository: a WMP error code and reason, and the HTTP status it is answered with. */
class EvidenceApiRefusal {
  constructor(
    readonly status: number,
    readonly code: ErrorCodeValue,
    readonly reason: string,
  ) {}
}

const REFUSALS = {
  // One answer for every signed-header failure: which check failed is not told.
  unauthorized: new EvidenceApiRefusal(401, ErrorCode.NotAuthorized, 'request_signature'),
  query: new EvidenceApiRefusal(400, ErrorCode.InvalidParams, 'query'),
  // Unknown, or not a record of one of the caller's messages: the same answer (no existence oracle).
  notFound: new EvidenceApiRefusal(404, ErrorCode.EvidenceRequired, 'not_found'),
  rate: new EvidenceApiRefusal(429, ErrorCode.RateLimited, 'rate'),
  unavailable: new EvidenceApiRefusal(503, ErrorCode.RateLimited, 'unavailable'),
  internal: new EvidenceApiRefusal(500, ErrorCode.InternalError, 'internal'),
} as const;

function refused(c: Context, r: EvidenceApiRefusal): Response {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  if (r.status === 401) headers['WWW-Authenticate'] = REQUEST_AUTH_SCHEME;
  if (r.status === 503) headers['Retry-After'] = '5';
  return c.json(
    { error: { code: r.code, message: ErrorMessage[r.code], data: { reason: r.reason } } },
    r.status as 400,
    headers,
  );
}

/** A record as served: its fields, its JWS and its token (wmp-tables §9). */
function served(entry: EvidenceEntry): Record<string, unknown> {
  const { evidence, ...rest } = JSON.parse(entry.body) as { evidence: Record<string, unknown> };
  return { ...evidence, ...rest };
}

function page(result: EvidencePage): Record<string, unknown> {
  return {
    evidence_records: result.entries.map(served),
    total_count: result.total,
    ...(result.next === undefined ? {} : { continuation_token: result.next }),
  };
}

const ID = /^[A-Za-z0-9._:~-]{1,256}$/;

function timeParam(value: string | undefined): number | undefined | null {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  return /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(t) ? t : null;
}

/** The query of `GET /evidence`: exactly one of `message_id` and `session_id`, a range, a page. */
function queryOf(c: Context): { query: EvidenceQuery; cursor: string | undefined; limit: number } | undefined {
  const q = c.req.query();
  const known = new Set(['message_id', 'session_id', 'since', 'until', 'continuation_token', 'limit']);
  if (Object.keys(q).some((k) => !known.has(k))) return undefined;
  const { message_id, session_id, since, until, continuation_token, limit } = q;
  if ((message_id === undefined) === (session_id === undefined)) return undefined;
  const n = limit === undefined ? MAX_EVIDENCE_PAGE : Number(limit);
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_EVIDENCE_PAGE) return undefined;
  if (continuation_token !== undefined && !/^\d{1,15}$/.test(continuation_token)) return undefined;
  let query: EvidenceQuery;
  if (message_id !== undefined) {
    if (!ID.test(message_id) || since !== undefined || until !== undefined) return undefined;
    query = { messageId: message_id };
  } else {
    const [from, to] = [timeParam(since), timeParam(until)];
    if (!ID.test(session_id!) || from === null || to === null) return undefined;
    query = {
      sessionId: session_id!,
      ...(from === undefined ? {} : { since: from }),
      ...(to === undefined ? {} : { until: to }),
    };
  }
  return { query, cursor: continuation_token, limit: n };
}

/**
 * The evidence repository over HTTP (wmp-tables §9): `GET /evidence/{id}`, `GET
 * /evidence?message_id=`, `GET /evidence?session_id=&since=&until=`, served only to the parties
 * of the message (its sender, and the recipients a record is about), with a request signed as
 * the box's are (`Authorization: OHAN-Sig`, decision 0031: the claims name this relay's origin,
 * the method and the raw target; one use per nonce). The signing key names the caller:
 * `did:key:<key>`. The signature is checked before anything else is read; refusals are WMP error
 * codes, the HTTP status as the relay's other answers.
 */
export function createEvidenceApp(input: EvidenceApiInput): Hono {
  const app = new Hono();

  const caller = async (c: Context): Promise<string | EvidenceApiRefusal> => {
    const source = input.sourceOf(c);
    if (source !== undefined && !(await input.perSource.take(source))) return REFUSALS.rate;
    let verdict: Awaited<ReturnType<typeof verifyRequest>>;
    try {
      verdict = await verifyRequest(c.req.header('authorization'), {
        origin: input.origin(),
        method: c.req.method,
        target: requestTarget(c.req.url),
        now: input.now(),
        nonces: input.nonces,
        skewSeconds: OHAN_SKEW_SECONDS,
        admit: (key) => input.perKey.take(key),
        ...(source === undefined ? {} : { source }),
      });
    } catch (e) {
      if (e instanceof ReplayCacheFullError) return REFUSALS.unavailable;
      throw e;
    }
    if (!verdict.ok) return verdict.reason === 'rate_limited' ? REFUSALS.rate : REFUSALS.unauthorized;
    return `did:key:${verdict.key}`;
  };

  const answer = async (c: Context, read: (party: string) => Promise<Response>): Promise<Response> => {
    try {
      const party = await caller(c);
      if (party instanceof EvidenceApiRefusal) return refused(c, party);
      return await read(party);
    } catch (e) {
      if (e instanceof StoreInputError) return refused(c, REFUSALS.query);
      if (isStoreUnavailable(e)) return refused(c, REFUSALS.unavailable);
      input.logger.error('relay.evidence.api_failed', { error: (e as Error)?.name ?? 'unknown' });
      return refused(c, REFUSALS.internal);
    }
  };

  app.get('/', (c) =>
    answer(c, async (party) => {
      const q = queryOf(c);
      if (q === undefined) return refused(c, REFUSALS.query);
      return c.json(page(await input.store.find(q.query, party, q.cursor, q.limit)), 200, {
        'Cache-Control': 'no-store',
      });
    }),
  );

  app.get('/:id', (c) =>
    answer(c, async (party) => {
      const id = c.req.param('id');
      const entry = ID.test(id) ? await input.store.get(id) : undefined;
      if (entry === undefined || !entry.parties.includes(party)) return refused(c, REFUSALS.notFound);
      return c.json(page({ entries: [entry], total: 1, next: undefined }), 200, { 'Cache-Control': 'no-store' });
    }),
  );

  return app;
}
