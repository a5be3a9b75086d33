import { DEFAULT_PARSE_LIMITS, ErrorCode, type ErrorCodeValue, type JsonRpcId } from '@wmp/jsonrpc-envelope';
import type { TransportMessageExtra } from '@wmp/session';
import { type Context, Hono } from 'hono';
import { cors } from 'hono/cors';
import { tlsPeerCertificates } from '../tls-peer.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../ws/ws-protocol.js';
import { AskedRequests } from './http-asked.js';
import type { HttpBindingOptions, IdOnlyVerdict } from './http-binding-options.js';
import { readBody } from './http-body.js';
import { classifyPostBody, type PostBody } from './http-frames.js';
import type { PendingOutcome, PendingPost } from './http-pending.js';
import {
  acceptsEventStream,
  DEFAULT_WMP_PATH,
  isJsonContentType,
  parseEventId,
  WMP_SESSION_ID_HEADER,
  WMP_SESSION_TOKEN_HEADER,
  WMP_SSE_EVENT,
} from './http-protocol.js';
import { bindingError, bindingErrors, jsonReply, SSE_HEADERS } from './http-replies.js';
import { nodeServerAddress, requestAddress } from './http-request-address.js';
import { type HttpPeerInfo, HttpSession, type HttpSessionLimits } from './http-session.js';
import { randomSessionTokens } from './http-session-tokens.js';
import { bearerToken, constantTimeEqual } from './http-token.js';
import { SseWriter } from './sse-writer.js';

/**
 * The host could not take an adopted session for now (its refusal was -31007: say, its store is
 * down), as opposed to not at all: the client must not take it for a session that is gone.
 */
class Busy {
  constructor(readonly reason: string | undefined) {}
}

function busyOf(refusal: unknown): Busy | undefined {
  const { code, data } = (refusal ?? {}) as { code?: unknown; data?: { reason?: unknown } };
  if (code !== ErrorCode.RateLimited) return undefined;
  return new Busy(typeof data?.reason === 'string' ? data.reason : undefined);
}

const busyReply = (busy: Busy): Response =>
  jsonReply(bindingError(ErrorCode.RateLimited, busy.reason), 503, { 'Retry-After': '5' });

/** A WMP session another node's HTTP session carried, to be carried here now. */
class Adoption {
  constructor(
    readonly sessionId: string,
    readonly token: string,
  ) {}
}

const isAdoption = (value: unknown): value is Adoption => value instanceof Adoption;

export interface HttpBinding {
  /** The hono app with the binding's routes (mount it, or serve `app.fetch`). */
  readonly app: Hono;
  /** Open HTTP sessions (with or without an id yet). */
  readonly sessionCount: number;
  /**
   * Ends every SSE stream, answers every waiting POST (503) and closes every session transport,
   * so that the server's `close()` does not wait on open streams.
   */
  close(): Promise<void>;
}

/** The answer to a body the binding would not read to the end (transport failures, not JSON-RPC). */
const BODY_REFUSALS: Readonly<Record<'too_large' | 'timeout' | 'busy' | 'aborted', () => Response>> = {
  aborted: () => jsonReply(bindingError(ErrorCode.InvalidRequest, 'body incomplete'), 400, { Connection: 'close' }),
  too_large: () => jsonReply(bindingError(ErrorCode.InvalidRequest, 'message too large'), 413),
  timeout: () => jsonReply(bindingError(ErrorCode.InvalidRequest, 'body too slow'), 408, { Connection: 'close' }),
  busy: () => jsonReply(bindingError(ErrorCode.RateLimited, 'busy'), 503, { 'Retry-After': '5' }),
};

/** The client certificate of the TLS socket under @hono/node-server's `incoming` request, if any. */
function nodeServerCertificates(c: Context): readonly Uint8Array[] | undefined {
  return tlsPeerCertificates((c.env as { incoming?: { socket?: unknown } } | undefined)?.incoming?.socket);
}

/** Requests of the server awaiting answers that may name no session: per HTTP session, and in all. */
const ASKED_PER_SESSION = 1024;
const ASKED_IN_ALL = 65_536;

const STATUS_OF: Readonly<Record<PendingOutcome, 200 | 503 | 504>> = {
  complete: 200,
  timeout: 504,
  closed: 503,
  aborted: 503,
};

/**
 * The HTTPS binding (transport §4) as a hono app: `POST <path>` (request/response, or streamed
 * as SSE when the client accepts `text/event-stream`), `GET <path>` and `GET <path>/events`
 * (SSE streams with `Last-Event-ID` replay). One `HttpSessionTransport` per HTTP session; the
 * session is bound to a secret token returned on the reply that created it.
 */
export function createHttpBinding(options: HttpBindingOptions): HttpBinding {
  const path = options.path ?? DEFAULT_WMP_PATH;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const maxOpeningBodyBytes = Math.min(maxBodyBytes, options.maxUnauthenticatedBodyBytes ?? maxBodyBytes);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
  const socketAddressOf = options.remoteAddress ?? nodeServerAddress;
  const trusted = options.trustedProxies ?? new Set<string>();
  const addressOf = (c: Context) => requestAddress(c, trusted, socketAddressOf);
  const certificatesOf = options.peerCertificates ?? nodeServerCertificates;
  const peerOf = (c: Context): HttpPeerInfo => ({ remoteAddress: addressOf(c), peerCertificates: certificatesOf(c) });
  const parseLimits = options.parseLimits ?? { ...DEFAULT_PARSE_LIMITS, maxBytes: maxBodyBytes };
  const maxSessions = options.maxSessions ?? 10_000;
  const idleMs = options.sessionIdleMs ?? 15 * 60_000;
  const idOnly = options.allowSessionIdOnly ?? false;
  const allowIdOnly = (id: string): IdOnlyVerdict | Promise<IdOnlyVerdict> =>
    typeof idOnly === 'function' ? idOnly(id) : idOnly;
  const limits: HttpSessionLimits = {
    maxMessageBytes: maxBodyBytes,
    replayEvents: options.replayBuffer ?? 200,
    replayChars: options.replayBufferChars ?? 4 * 1024 * 1024,
    maxSubscribers: options.maxSubscribers ?? 8,
    maxPendingPosts: options.maxPendingPosts ?? 32,
    pendingTimeoutMs: options.pendingTimeoutMs ?? 30_000,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    maxQueuedBytes: options.maxQueuedBytes ?? 4 * 1024 * 1024,
    replayBudget: options.replayBudget,
    outboundBudget: options.outboundBudget,
  };

  const tokens = options.sessionTokens ?? randomSessionTokens;
  const live = new Set<HttpSession>();
  // Several HTTP sessions may carry one WMP session (participants of a group session, a device
  // that resumed): each has its own token, which is what identifies it.
  const byToken = new Map<string, HttpSession>();
  const byId = new Map<string, Set<HttpSession>>();
  const asked = new AskedRequests<HttpSession>(ASKED_IN_ALL, ASKED_PER_SESSION);
  let closed = false;

  const hooks = {
    register(session: HttpSession, id: string): void {
      const set = byId.get(id) ?? new Set<HttpSession>();
      byId.set(id, set);
      set.add(session);
      if (session.token !== undefined) byToken.set(session.token, session);
    },
    issueToken: (id: string) => tokens.issue(id),
    asked: (session: HttpSession, id: JsonRpcId) => asked.asked(session, id),
    closed(session: HttpSession): void {
      asked.forget(session);
      live.delete(session);
      if (session.token !== undefined) byToken.delete(session.token);
      const set = session.id === undefined ? undefined : byId.get(session.id);
      set?.delete(session);
      if (set?.size === 0) byId.delete(session.id!);
    },
  };

  /** The token a request presents: the `Wmp-Session-Token` header, else a Bearer credential. */
  const presentedToken = (c: Context): string | undefined =>
    c.req.header(WMP_SESSION_TOKEN_HEADER) ?? bearerToken(c.req.header('authorization'));

  /**
   * The HTTP session a request names (by id) and proves (by token, compared in constant time);
   * with `allowSessionIdOnly`, the newest HTTP session of that id when no token is presented (a
   * client that resumed opened a new one). `unknown` when no HTTP session has the id; `denied`
   * when the proof fails.
   */
  const lookup = async (c: Context, id: string): Promise<HttpSession | Adoption | 'unknown' | 'denied'> => {
    const candidates = byId.get(id);
    const token = presentedToken(c);
    if (!candidates || candidates.size === 0) return adoption(c, id, token);
    if (token !== undefined) {
      for (const candidate of candidates) {
        if (candidate.token !== undefined && constantTimeEqual(token, candidate.token)) return candidate;
      }
      // Issued for this session by another node (another device's HTTP session is here).
      if (tokens.verify(id, token)) return new Adoption(id, token);
    }
    // A `Wmp-Session-Token` is ours and must be right; a Bearer that is not ours may be the
    // application's own credential, which id-only binding leaves alone.
    if (c.req.header(WMP_SESSION_TOKEN_HEADER) === undefined) {
      const verdict = await allowIdOnly(id);
      if (verdict === 'unknown') return 'unknown';
      const newest = verdict ? [...candidates].at(-1) : undefined;
      if (newest !== undefined && !newest.closed) return newest;
    }
    return 'denied';
  };

  /**
   * A session no HTTP session here carries: adoptable when the token is one of ours (issued by any
   * node holding the key), or, where id-only binding is allowed, with no token at all.
   */
  const adoption = async (c: Context, id: string, token: string | undefined): Promise<Adoption | 'unknown'> => {
    if (token !== undefined) return tokens.verify(id, token) ? new Adoption(id, token) : 'unknown';
    if (c.req.header(WMP_SESSION_TOKEN_HEADER) !== undefined) return 'unknown';
    return (await allowIdOnly(id)) === true ? new Adoption(id, tokens.issue(id)) : 'unknown';
  };

  /** Opens the HTTP session of an adopted WMP session and hands it to the server; undefined if refused. */
  const adopt = async (c: Context, a: Adoption): Promise<HttpSession | Busy | undefined> => {
    if (live.size >= maxSessions) return undefined;
    const session = new HttpSession(limits, hooks, peerOf(c));
    live.add(session);
    session.adopt(a.sessionId, a.token);
    let refused: unknown;
    try {
      session.host = await options.onTransport(session.transport, c.req.raw, { adopt: a.sessionId });
    } catch (error) {
      refused = error ?? new Error('refused');
    }
    if (refused !== undefined || session.closed || !live.has(session)) {
      await session.close();
      return busyOf(refused);
    }
    return session;
  };

  /** Why a request that names an HTTP session does not prove it (`data.reason` of its -31002). */
  const unproven = (c: Context): string =>
    presentedToken(c) === undefined ? 'session token required' : 'session token not valid for this session';

  /** A stream request (no JSON-RPC in it) that does not prove its session: a transport failure. */
  const unauthorized = (c: Context): Response =>
    jsonReply(bindingError(ErrorCode.NotAuthorized, unproven(c)), 401, { 'WWW-Authenticate': 'Bearer' });

  /**
   * A JSON-RPC answer from the binding itself (decision 0055, transport §4.2): HTTP 200 with an
   * error for each request of the body, by its id, so that clients that drop the body of a non-2xx
   * answer still read the WMP code. A body of notifications only has nothing to answer: it gets
   * the transport status instead.
   */
  const refuse = (code: ErrorCodeValue, body: PostBody, otherwise: number, reason: string): Response =>
    body.expected.length > 0
      ? jsonReply(bindingErrors(code, body.expected, body.batch, reason), 200)
      : jsonReply(bindingError(code, reason), otherwise, otherwise === 401 ? { 'WWW-Authenticate': 'Bearer' } : {});

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const session of live) if (session.isIdle(now, idleMs)) void session.close();
    },
    Math.max(1_000, Math.min(idleMs / 2, 60_000)),
  );
  (sweeper as { unref?: () => void }).unref?.();

  const finishUnbound = (session: HttpSession): void => {
    // A session that never got an id cannot be named again: nothing else will reach it.
    if (session.id === undefined) void session.close();
  };

  const sessionHeaders = (post: PendingPost): Record<string, string> =>
    post.sessionHeaders
      ? {
          [WMP_SESSION_ID_HEADER]: post.sessionHeaders.sessionId,
          [WMP_SESSION_TOKEN_HEADER]: post.sessionHeaders.token,
        }
      : {};

  /**
   * Whether a POST proves `session` without naming it (answers to the server's requests, posted
   * by a client that sends no `Wmp-Session-Id`): its token, else, where id-only binding is allowed
   * and no `Wmp-Session-Token` was presented, the request ids only that session's stream carried.
   */
  const provesAsker = async (c: Context, session: HttpSession): Promise<boolean> => {
    const token = presentedToken(c);
    if (token !== undefined && session.token !== undefined && constantTimeEqual(token, session.token)) return true;
    if (c.req.header(WMP_SESSION_TOKEN_HEADER) !== undefined || session.id === undefined) return false;
    return (await allowIdOnly(session.id)) === true;
  };

  /** A body of answers only, naming no session, to requests the server sent on `session`. */
  const answerAsker = async (c: Context, session: HttpSession, body: PostBody, bytes: Uint8Array) => {
    if (!(await provesAsker(c, session))) return refuse(ErrorCode.NotAuthorized, body, 401, unproven(c));
    if (session.closed) return refuse(ErrorCode.SessionNotFound, body, 404, 'unknown session');
    const authorization = c.req.header('authorization');
    session.deliver(bytes, {
      ...(session.id === undefined ? {} : { sessionId: session.id }),
      ...(authorization === undefined ? {} : { authorization }),
    });
    asked.answered(session, body.answers);
    return c.body(null, 202);
  };

  const handlePost = async (c: Context): Promise<Response> => {
    if (closed) return jsonReply(bindingError(ErrorCode.InternalError, 'shutting down'), 503);
    if (!isJsonContentType(c.req.header('content-type'))) {
      return jsonReply(bindingError(ErrorCode.InvalidRequest, 'content type must be application/json'), 415);
    }
    // A POST that names no open HTTP session in its header opens one: a stranger's, held to the
    // smaller limit (a session named only in the body is checked once the body is read).
    const header = c.req.header(WMP_SESSION_ID_HEADER);
    const token = presentedToken(c);
    const opening =
      header === undefined || (!byId.has(header) && (token === undefined || !tokens.verify(header, token)));
    const read = await readBody(c.req.raw.body, {
      maxBytes: opening ? maxOpeningBodyBytes : maxBodyBytes,
      declaredLength: c.req.header('content-length'),
      budget: options.bodyBudget,
      timeoutMs: bodyTimeoutMs,
    });
    if (!read.ok) return BODY_REFUSALS[read.reason]();
    const bytes = read.bytes;
    const body = classifyPostBody(bytes, parseLimits);
    const asker = header === undefined && body.sessionId === undefined ? asked.sessionOf(body.answers) : undefined;
    if (asker !== undefined) return answerAsker(c, asker, body, bytes);

    const named = header ?? body.sessionId;
    const found = named === undefined ? 'unknown' : await lookup(c, named);
    // A create or resume brings its own proof (a resumption token, a signed challenge): one that
    // names an HTTP session it cannot prove (wmp-js keeps the old id when it resumes) opens a new one.
    if (found === 'denied' && !body.opensSession) return refuse(ErrorCode.NotAuthorized, body, 401, unproven(c));
    const taken =
      found === 'unknown' || found === 'denied' ? undefined : isAdoption(found) ? await adopt(c, found) : found;
    if (taken instanceof Busy) return refuse(ErrorCode.RateLimited, body, 503, taken.reason ?? 'try again');
    let session = taken;
    if (isAdoption(found) && session === undefined && !body.opensSession) {
      return refuse(ErrorCode.SessionNotFound, body, 404, 'unknown session');
    }
    if (!session) {
      // An unknown id is an error, except on create/resume: those open a new HTTP session
      // (a client resuming after this server restarted or the HTTP session expired).
      if (named !== undefined && !body.opensSession)
        return refuse(ErrorCode.SessionNotFound, body, 404, 'unknown session');
      if (live.size >= maxSessions) {
        return jsonReply(bindingError(ErrorCode.RateLimited, 'too many sessions'), 503, { 'Retry-After': '5' });
      }
      if (named === undefined && opening && bytes.byteLength > maxOpeningBodyBytes) {
        return jsonReply(bindingError(ErrorCode.InvalidRequest, 'message too large'), 413);
      }
      session = new HttpSession(limits, hooks, peerOf(c));
      live.add(session);
      try {
        session.host = await options.onTransport(session.transport, c.req.raw);
      } catch {
        // The server refused the connection (its caps) or failed to take it.
      }
      if (session.closed || !live.has(session)) {
        const overloaded = session.closeReason === 'overloaded';
        await session.close();
        return overloaded
          ? jsonReply(bindingErrors(ErrorCode.RateLimited, body.expected, body.batch, 'overloaded'), 503, {
              'Retry-After': '5',
            })
          : jsonReply(bindingErrors(ErrorCode.InternalError, body.expected, body.batch, 'connection refused'), 500);
      }
    }

    // The session may have ended while this request was read (idle sweep, DELETE, takeover).
    if (session.closed) return refuse(ErrorCode.SessionNotFound, body, 404, 'unknown session');
    const authorization = c.req.header('authorization');
    const extra: TransportMessageExtra = {
      ...(session.id === undefined ? {} : { sessionId: session.id }),
      ...(authorization === undefined ? {} : { authorization }),
    };

    if (body.expected.length === 0) {
      session.deliver(bytes, extra);
      if (body.answers.length > 0) asked.answered(session, body.answers);
      finishUnbound(session);
      return c.body(null, 202);
    }
    if (session.pendingPosts >= limits.maxPendingPosts) {
      return jsonReply(bindingError(ErrorCode.RateLimited, 'too many pending requests'), 429);
    }
    const streaming = acceptsEventStream(c.req.header('accept'));
    const post = session.await(body, streaming);
    c.req.raw.signal.addEventListener('abort', () => post.settle('aborted'), { once: true });
    const current = session;
    session.deliver(bytes, extra);

    if (streaming) await post.firstOutput;
    if (!streaming || post.outputs === 0) {
      const outcome = await post.done;
      finishUnbound(current);
      return jsonReply(post.reply(), STATUS_OF[outcome], sessionHeaders(post));
    }
    const writer = new SseWriter({
      keepAliveMs: limits.keepAliveMs,
      maxQueuedBytes: limits.maxQueuedBytes,
      onEnd: () => post.settle('aborted'),
    });
    post.stream((frame) => writer.write({ event: WMP_SSE_EVENT, id: current.nextEventId(), data: frame }));
    void post.done.then(() => {
      writer.close();
      finishUnbound(current);
    });
    return new Response(writer.body, { status: 200, headers: { ...SSE_HEADERS, ...sessionHeaders(post) } });
  };

  const handleGet = async (c: Context): Promise<Response> => {
    if (closed) return jsonReply(bindingError(ErrorCode.InternalError, 'shutting down'), 503);
    const id = c.req.header(WMP_SESSION_ID_HEADER) ?? c.req.query('session_id');
    if (!id) return jsonReply(bindingError(ErrorCode.InvalidRequest, 'missing session id'), 400);
    const found = await lookup(c, id);
    if (found === 'unknown') return jsonReply(bindingError(ErrorCode.SessionNotFound, 'unknown session'), 404);
    if (found === 'denied') return unauthorized(c);
    const session = isAdoption(found) ? await adopt(c, found) : await stillLive(found, id);
    if (session instanceof Busy) return busyReply(session);
    if (session === undefined) return jsonReply(bindingError(ErrorCode.SessionNotFound, 'unknown session'), 404);
    const lastEventId = parseEventId(c.req.header('last-event-id') ?? c.req.query('lastEventId'));
    const writer = session.subscribe(lastEventId);
    if (!writer) return jsonReply(bindingError(ErrorCode.RateLimited, 'too many streams'), 429);
    return new Response(writer.body, { status: 200, headers: SSE_HEADERS });
  };

  /**
   * An HTTP session held here whose WMP session may have ended on another node: ended here too
   * (undefined) when the host says it is gone.
   */
  const stillLive = async (session: HttpSession, id: string): Promise<HttpSession | undefined> => {
    if (options.sessionLive === undefined || (await options.sessionLive(id)))
      return session.closed ? undefined : session;
    session.end();
    return undefined;
  };

  /**
   * Ends (logs out of) the session: the host ends the WMP session first, on every node (its token
   * and resumption token die with it), then this HTTP session and its streams. A session held by
   * another node is adopted here to be ended.
   */
  const handleDelete = async (c: Context): Promise<Response> => {
    const id = c.req.header(WMP_SESSION_ID_HEADER);
    if (!id) return jsonReply(bindingError(ErrorCode.InvalidRequest, 'missing session id'), 400);
    const found = await lookup(c, id);
    if (found === 'unknown') return jsonReply(bindingError(ErrorCode.SessionNotFound, 'unknown session'), 404);
    if (found === 'denied') return unauthorized(c);
    const session = isAdoption(found) ? await adopt(c, found) : found;
    if (session instanceof Busy) return busyReply(session);
    if (session === undefined) return jsonReply(bindingError(ErrorCode.SessionNotFound, 'unknown session'), 404);
    if (options.endSession !== undefined) {
      try {
        await options.endSession(session.host, id);
      } catch {
        return jsonReply(bindingError(ErrorCode.RateLimited, 'try again'), 503, { 'Retry-After': '5' });
      }
    }
    await session.close();
    return c.body(null, 204);
  };

  const notAllowed = (c: Context): Response => c.body(null, 405, { Allow: 'GET, POST, DELETE' });

  const app = new Hono();
  if (options.cors) {
    const origins = options.cors.origins;
    const middleware = cors({
      origin: origins === '*' ? '*' : [...origins],
      allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
      allowHeaders: [
        'Content-Type',
        'Accept',
        'Authorization',
        WMP_SESSION_ID_HEADER,
        WMP_SESSION_TOKEN_HEADER,
        'Last-Event-ID',
      ],
      exposeHeaders: [WMP_SESSION_ID_HEADER, WMP_SESSION_TOKEN_HEADER],
      maxAge: 600,
    });
    app.use(path, middleware);
    app.use(`${path}/*`, middleware);
  }
  app.post(path, handlePost);
  app.get(path, handleGet);
  app.get(`${path}/events`, handleGet);
  app.delete(path, handleDelete);
  app.all(path, notAllowed);
  app.all(`${path}/events`, notAllowed);

  return {
    app,
    get sessionCount() {
      return live.size;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweeper);
      await Promise.all([...live].map((s) => s.close()));
    },
  };
}
