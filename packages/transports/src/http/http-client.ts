import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { Transport, TransportMessageExtra, TransportSendOptions } from '@wmp/session';
import { ReconnectFailedError, ReconnectPolicy, type ReconnectPolicyOptions, reconnect } from '../reconnect.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../ws/ws-protocol.js';
import { readBoundedBody } from './http-body.js';
import { HttpStatusError, HttpTransportError } from './http-errors.js';
import { announcedSessionId } from './http-frames.js';
import { acceptsEventStream, WMP_SESSION_ID_HEADER, WMP_SESSION_TOKEN_HEADER, WMP_SSE_EVENT } from './http-protocol.js';
import { toHttpUrl } from './http-url.js';
import { type SseEvent, SseParser } from './sse-parser.js';
import { readSseStream } from './sse-reader.js';

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface HttpClientTransportOptions {
  /** The POST endpoint, e.g. `https://relay.example/wmp`. `http:` only with `allowInsecure` or to a loopback host. */
  readonly endpoint: string | URL;
  /** Defaults to the global `fetch`. */
  readonly fetch?: FetchLike;
  /** Extra headers on every request (e.g. an application `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** A session to talk in from the start; otherwise learned from the create or resume response. */
  readonly sessionId?: string;
  /** The session's binding token, if already known; otherwise learned from the `Wmp-Session-Token` reply header. */
  readonly sessionToken?: string;
  readonly allowInsecure?: boolean;
  /** Keep an SSE stream open for server-initiated messages once a session id is known. Default true. */
  readonly events?: boolean;
  /** The SSE endpoint; default `<endpoint>/events` (`?session_id=` is added). */
  readonly eventsUrl?: string | URL;
  /** Ask for POST replies as SSE streams (`Accept: text/event-stream`, streamable HTTP). Default false. */
  readonly streamReplies?: boolean;
  /**
   * How the SSE stream is reopened after a drop (transport §3.5; default 1 s doubling to 30 s,
   * full jitter, 10 attempts in a row before `ERR_HTTP_EVENTS_GAVE_UP`). A server `retry:`
   * replaces the first delay.
   */
  readonly reconnect?: ReconnectPolicy | ReconnectPolicyOptions;
  /** Largest reply body or event, in bytes; default 1 MiB. */
  readonly maxMessageBytes?: number;
}

/** HTTP statuses after which reconnecting the stream cannot help. */
const PERMANENT = new Set([400, 401, 403, 404, 405, 410]);

/** `<endpoint>/events`, keeping the endpoint's query (go-wmp's client does the same). */
function eventsUrlOf(endpoint: URL): URL {
  const url = new URL(endpoint);
  url.pathname = `${endpoint.pathname.replace(/\/+$/, '')}/events`;
  return url;
}

/** Reconnecting the stream cannot help after these. */
function isPermanent(error: unknown): boolean {
  return error instanceof HttpStatusError && PERMANENT.has(error.status);
}

/** Where the event stream is, carried from one connection of it to the next. */
interface StreamCursor {
  lastEventId: string;
  /** The server's `retry:`, in ms. */
  retry: number | undefined;
}

/**
 * WMP over HTTPS (transport §4), browser-safe (fetch only). Each outgoing message or batch is
 * one POST; a JSON reply (or a streamed SSE reply) is delivered to `onmessage`, 202 delivers
 * nothing. Once a session id is known, an SSE stream on `GET <endpoint>/events?session_id=`
 * carries server-initiated messages, reconnecting with `Last-Event-ID` after a drop.
 */
export class HttpClientTransport implements Transport {
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly maxMessageBytes: number;

  readonly #endpoint: URL;
  readonly #eventsUrl: URL;
  readonly #fetch: FetchLike;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #eventsEnabled: boolean;
  readonly #streamReplies: boolean;
  readonly #reconnect: ReconnectPolicy;
  readonly #closing = new AbortController();
  #sessionId: string | undefined;
  #token: string | undefined;
  #events: AbortController | undefined;
  #started = false;
  #closed = false;

  constructor(options: HttpClientTransportOptions) {
    const allowInsecure = options.allowInsecure ?? false;
    this.#endpoint = toHttpUrl(options.endpoint, allowInsecure);
    this.#eventsUrl = toHttpUrl(options.eventsUrl ?? eventsUrlOf(this.#endpoint), allowInsecure);
    // Called unbound: browsers throw "Illegal invocation" on fetch with another `this`.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#headers = { ...options.headers };
    this.#sessionId = options.sessionId;
    this.#token = options.sessionToken;
    this.#eventsEnabled = options.events ?? true;
    this.#streamReplies = options.streamReplies ?? false;
    this.#reconnect =
      options.reconnect instanceof ReconnectPolicy ? options.reconnect : new ReconnectPolicy(options.reconnect);
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  get sessionToken(): string | undefined {
    return this.#token;
  }

  /** Talks in this session from now on (reopening the event stream for it). */
  setSessionId(id: string | undefined): void {
    if (id === this.#sessionId) return;
    this.#sessionId = id;
    this.#openEvents();
  }

  setSessionToken(token: string | undefined): void {
    this.#token = token;
  }

  async start(): Promise<void> {
    if (this.#started) throw new HttpTransportError('ERR_HTTP_ALREADY_STARTED');
    this.#started = true;
    this.#openEvents();
  }

  async send(message: JsonRpcMessage | readonly JsonRpcMessage[], _options?: TransportSendOptions): Promise<void> {
    if (this.#closed) throw new HttpTransportError('ERR_HTTP_CLOSED');
    let res: Response;
    try {
      res = await this.#fetch(this.#endpoint, {
        method: 'POST',
        headers: {
          ...this.#headers,
          ...this.#sessionHeaders(),
          'Content-Type': 'application/json',
          Accept: this.#streamReplies ? 'application/json, text/event-stream' : 'application/json',
        },
        body: JSON.stringify(message),
        signal: this.#closing.signal,
      });
    } catch (e) {
      throw new HttpTransportError(this.#closed ? 'ERR_HTTP_CLOSED' : 'ERR_HTTP_FETCH', { cause: e });
    }
    this.#learnHeaders(res.headers);
    try {
      await this.#readReply(res);
    } catch (e) {
      if (e instanceof HttpTransportError) throw e;
      throw new HttpTransportError(this.#closed ? 'ERR_HTTP_CLOSED' : 'ERR_HTTP_FETCH', { cause: e });
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#events?.abort();
    this.#events = undefined;
    // No DELETE: that logs out of the session (its resumption token dies too), and a closed
    // transport is a dropped connection, which the session outlives (it resumes elsewhere). The
    // server's HTTP session has no stream any more, so it is offline and idles out.
    this.onclose?.();
  }

  async #readReply(res: Response): Promise<void> {
    if (res.status === 202 || res.status === 204) {
      await res.body?.cancel().catch(() => undefined);
      if (!res.ok) throw new HttpStatusError(res.status);
      return;
    }
    if (res.ok && res.body && acceptsEventStream(res.headers.get('content-type'))) {
      const parser = new SseParser({ maxEventChars: this.maxMessageBytes });
      await readSseStream(res.body, parser, (event) => this.#deliverEvent(event));
      return;
    }
    const bytes = await readBoundedBody(res.body, this.maxMessageBytes, res.headers.get('content-length'));
    if (bytes === undefined) throw new HttpTransportError('ERR_HTTP_REPLY_TOO_LARGE');
    // The server answers refusals in JSON-RPC too: that answer is the outcome (the Peer settles
    // the calls it names); only a refusal without one is reported as an HTTP error.
    if (bytes.byteLength > 0 && /json/i.test(res.headers.get('content-type') ?? '')) {
      this.#deliver(new TextDecoder().decode(bytes));
      return;
    }
    if (!res.ok) throw new HttpStatusError(res.status);
  }

  #sessionHeaders(): Record<string, string> {
    return {
      ...(this.#sessionId === undefined ? {} : { [WMP_SESSION_ID_HEADER]: this.#sessionId }),
      ...(this.#token === undefined ? {} : { [WMP_SESSION_TOKEN_HEADER]: this.#token }),
    };
  }

  #learnHeaders(headers: Headers): void {
    const token = headers.get(WMP_SESSION_TOKEN_HEADER);
    if (token) this.#token = token;
    const id = headers.get(WMP_SESSION_ID_HEADER);
    if (id) this.setSessionId(id);
  }

  #deliverEvent(event: SseEvent): void {
    if (event.event === WMP_SSE_EVENT || event.event === 'message') this.#deliver(event.data);
  }

  #deliver(frame: string): void {
    if (this.#closed) return;
    // Learn the session from a create/resume answer before the Peer sees it (as wmp-js does), so
    // that the next request already carries it. Only the first: the server names this HTTP
    // session by the first session it announced, and later sessions carried on it (a group
    // created or joined) are reached through that name too.
    if (this.#sessionId === undefined && frame.includes('"session_id"')) {
      try {
        const id = announcedSessionId(JSON.parse(frame) as JsonRpcMessage);
        if (id !== undefined) this.setSessionId(id);
      } catch {
        // not JSON: the Peer reports it
      }
    }
    try {
      this.onmessage?.(frame);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }

  #openEvents(): void {
    this.#events?.abort();
    this.#events = undefined;
    const sessionId = this.#sessionId;
    if (!this.#eventsEnabled || !this.#started || this.#closed || sessionId === undefined) return;
    const control = new AbortController();
    this.#events = control;
    void this.#runEvents(sessionId, control.signal);
  }

  /**
   * The event stream of `sessionId` until `signal` aborts: opened at once, and after every drop
   * reopened (with `Last-Event-ID`) by `reconnect` on the transport's policy. Each failure goes
   * to `onerror`.
   */
  async #runEvents(sessionId: string, signal: AbortSignal): Promise<void> {
    const cursor: StreamCursor = { lastEventId: '', retry: undefined };
    const connect = () => this.#connectEvents(sessionId, cursor, signal);
    try {
      let body = await connect().catch((e: unknown) => {
        if (isPermanent(e)) throw e;
        return undefined;
      });
      for (;;) {
        if (body) await this.#readEvents(body, cursor, signal);
        const policy = cursor.retry === undefined ? this.#reconnect : this.#reconnect.withInitialDelay(cursor.retry);
        body = await reconnect(connect, policy, { signal, isRetryable: (e) => !isPermanent(e) });
      }
    } catch (e) {
      if (!signal.aborted && e instanceof ReconnectFailedError) {
        this.onerror?.(new HttpTransportError('ERR_HTTP_EVENTS_GAVE_UP'));
      }
    }
  }

  /** One GET of the event stream: its body, or a rejection already reported to `onerror`. */
  async #connectEvents(
    sessionId: string,
    cursor: StreamCursor,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    const url = new URL(this.#eventsUrl);
    url.searchParams.set('session_id', sessionId);
    try {
      const res = await this.#fetch(url, {
        headers: {
          ...this.#headers,
          ...this.#sessionHeaders(),
          Accept: 'text/event-stream',
          ...(cursor.lastEventId === '' ? {} : { 'Last-Event-ID': cursor.lastEventId }),
        },
        signal,
      });
      if (!res.ok || !res.body || !acceptsEventStream(res.headers.get('content-type'))) {
        await res.body?.cancel().catch(() => undefined);
        throw new HttpStatusError(res.status);
      }
      return res.body;
    } catch (e) {
      this.#eventsFailed(e, signal);
      throw e;
    }
  }

  /** Reads one connection of the stream until it ends or fails (reported to `onerror`). */
  async #readEvents(body: ReadableStream<Uint8Array>, cursor: StreamCursor, signal: AbortSignal): Promise<void> {
    const parser = new SseParser({ lastEventId: cursor.lastEventId, maxEventChars: this.maxMessageBytes });
    try {
      await readSseStream(body, parser, (event) => this.#deliverEvent(event));
    } catch (e) {
      this.#eventsFailed(e, signal);
    } finally {
      cursor.lastEventId = parser.lastEventId;
      cursor.retry = parser.retry ?? cursor.retry;
    }
  }

  #eventsFailed(error: unknown, signal: AbortSignal): void {
    if (signal.aborted) return;
    this.onerror?.(
      error instanceof HttpTransportError ? error : new HttpTransportError('ERR_HTTP_FETCH', { cause: error }),
    );
  }
}
