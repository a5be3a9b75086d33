// What `createHttpBinding` is configured with.
import type { ParseLimits } from '@wmp/jsonrpc-envelope';
import type { Context } from 'hono';
import type { ByteBudget } from '../byte-budget.js';
import type { HttpSessionTransport } from './http-session.js';
import type { SessionTokens } from './http-session-tokens.js';

/**
 * Whether a request may name a session by id alone: `true`, `false`, or `'unknown'` when there is
 * no such session any more (the answer is then -31000, and no HTTP session is handed out).
 */
export type IdOnlyVerdict = boolean | 'unknown';

export interface HttpBindingOptions {
  /**
   * Called once per new HTTP session with its transport (wire a Peer to it, then start it);
   * frames wait until the transport is started. `request` is the POST that opened the session
   * (its body already read). A throw or rejection ends the session with 500; for an adopted
   * session, a rejection with a -31007 error (`code`, `data.reason`) means "not now" (503 or a
   * -31007 answer, never -31000).
   */
  onTransport(transport: HttpSessionTransport, request: Request, context?: { readonly adopt?: string }): unknown;
  /**
   * `DELETE <path>`: the client ends (logs out of) the WMP session its HTTP session carries. Called
   * with what `onTransport` resolved with for that HTTP session and the session id; the host ends
   * the WMP session (a server: as a `wmp.session.close` from that client), so that its resumption
   * token and every HTTP session of it, on any node, die with it; resolve once that is stored.
   * A rejection answers 503 and leaves the session as it was. Absent: DELETE ends the HTTP session
   * only.
   */
  readonly endSession?: (host: unknown, sessionId: string) => Promise<void>;
  /**
   * Whether the WMP session of an HTTP session held here still exists, asked before an event
   * stream opens on it: on a cluster it may have been closed on another node. False ends the HTTP
   * session here (404). Absent: not asked.
   */
  readonly sessionLive?: (sessionId: string) => boolean | Promise<boolean>;
  /**
   * How session tokens are made and checked. Default: random tokens this process keeps. With keyed
   * tokens (`keyedSessionTokens`), a request that names a session no HTTP session here carries,
   * with a token another node issued (or by id alone where `allowSessionIdOnly` allows it), gets
   * an HTTP session here: `onTransport` is told to `adopt` that WMP session (no sticky sessions).
   */
  readonly sessionTokens?: SessionTokens;
  /** Endpoint path; default `/wmp`. SSE streams are `GET <path>` and `GET <path>/events`. */
  readonly path?: string;
  /** Largest POST body, refused with 413 before parsing; default 1 MiB (as go-wmp). */
  readonly maxBodyBytes?: number;
  /**
   * Largest body of a POST that names no open HTTP session (a create or a resume: nobody has
   * logged in on it yet); default `maxBodyBytes`. Smaller is cheaper to hold for strangers.
   */
  readonly maxUnauthenticatedBodyBytes?: number;
  /** A POST body must arrive within this long, else 408; default 30 s. */
  readonly bodyTimeoutMs?: number;
  /** Body bytes being read across the server; a body that does not fit is refused with 503. */
  readonly bodyBudget?: ByteBudget;
  /** Replay characters across every session (the oldest of a session go first when it is spent). */
  readonly replayBudget?: ByteBudget;
  /** Bytes queued to slow SSE readers across the server (a stream past it ends; it resumes). */
  readonly outboundBudget?: ByteBudget;
  /**
   * The client's address for a request, a key for per-source limits only (never logged). Default:
   * the socket of @hono/node-server's `incoming` request, when there is one.
   */
  readonly remoteAddress?: (c: Context) => string | undefined;
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (`clientAddress`): a request from
   * one of them is addressed by the forwarded address. Default: none.
   */
  readonly trustedProxies?: ReadonlySet<string>;
  /**
   * The TLS client certificate chain (DER, leaf first) of the request that opens an HTTP session,
   * for `mtls`. Default: from the TLS socket of @hono/node-server's `incoming` request, if any.
   */
  readonly peerCertificates?: (c: Context) => readonly Uint8Array[] | undefined;
  /** The limits the Peer parses with (the binding classifies bodies the same way). Default: envelope defaults with `maxBodyBytes`. */
  readonly parseLimits?: ParseLimits;
  /** CORS for browsers on other origins. Off unless set. */
  readonly cors?: { readonly origins: readonly string[] | '*' };
  /** Events kept per session for `Last-Event-ID` replay; default 200 (as go-wmp). */
  readonly replayBuffer?: number;
  /** Characters kept per session for replay; default 4 Mi. */
  readonly replayBufferChars?: number;
  /** Most HTTP sessions at once; more get 503. Default 10 000. */
  readonly maxSessions?: number;
  /** Most SSE streams per session; more get 429. Default 8. */
  readonly maxSubscribers?: number;
  /** Most POSTs of one session waiting for answers at once; more get 429. Default 32. */
  readonly maxPendingPosts?: number;
  /** How long a POST waits for its answers; then 504. Default 30 s. */
  readonly pendingTimeoutMs?: number;
  /** A session with no open stream, no waiting POST and no request for this long is closed. Default 15 min. */
  readonly sessionIdleMs?: number;
  /** SSE keep-alive comment interval; default 15 s. */
  readonly keepAliveMs?: number;
  /** Bytes queued for one slow SSE reader before its stream is ended (it resumes with Last-Event-ID). Default 4 MiB. */
  readonly maxQueuedBytes?: number;
  /**
   * WEAKER: accept requests that name a session without presenting its token (go-wmp and wmp-js
   * clients send neither `Authorization: Bearer` nor `Wmp-Session-Token`, and a browser
   * EventSource cannot). Anyone who learns such a session id can then post into the session and
   * read its stream. `true` for every session, or a predicate of the session id (a relay allows
   * it for hop sessions only, never for group sessions whose ids other participants know). A
   * token that is presented must still be right. Default false.
   */
  readonly allowSessionIdOnly?: boolean | ((sessionId: string) => IdOnlyVerdict | Promise<IdOnlyVerdict>);
}
