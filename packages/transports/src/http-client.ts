import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { Transport, TransportMessageExtra, TransportSendOptions } from '@wmp/session';
import { readBoundedBody } from './http-body.js';
import { HttpStatusError, HttpTransportError } from './http-errors.js';
import { announcedSessionId } from './http-frames.js';
import { acceptsEventStream, WMP_SESSION_ID_HEADER, WMP_SESSION_TOKEN_HEADER, WMP_SSE_EVENT } from './http-protocol.js';
import { toHttpUrl } from './http-url.js';
import { type SseEvent, SseParser } from './sse-parser.js';
import { readSseStream } from './sse-reader.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './ws-protocol.js';

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
  /** First reconnect delay of the SSE stream, doubled per failure; default 1 s (transport §3.5). A server `retry:` replaces it. */
  readonly reconnectDelayMs?: number;
  /** Largest reconnect delay; default 30 s. */
  readonly maxReconnectDelayMs?: number;
  /** Reconnect attempts in a row before giving up on the stream; default 10. */
  readonly maxReconnectAttempts?: number;
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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
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
  readonly #reconnectDelayMs: number;
  readonly #maxReconnectDelayMs: number;
  readonly #maxReconnectAttempts: number;
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
    this.#reconnectDelayMs = options.reconnectDelayMs ?? 1_000;
    this.#maxReconnectDelayMs = options.maxReconnectDelayMs ?? 30_000;
    this.#maxReconnectAttempts = options.maxReconnectAttempts ?? 10;
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
    // HTTP has no connection to drop: end the HTTP session explicitly, so the server stops routing
    // to it at once (best effort; it would otherwise idle out).
    if (this.#sessionId !== undefined && this.#token !== undefined) {
      await this.#fetch(this.#endpoint, { method: 'DELETE', headers: { ...this.#headers, ...this.#sessionHeaders() } })
        .then((res) => res.body?.cancel())
        .catch(() => undefined);
    }
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

  async #runEvents(sessionId: string, signal: AbortSignal): Promise<void> {
    let lastEventId = '';
    let retry: number | undefined;
    let failures = 0;
    while (!signal.aborted) {
      const url = new URL(this.#eventsUrl);
      url.searchParams.set('session_id', sessionId);
      const parser = new SseParser({ lastEventId, maxEventChars: this.maxMessageBytes });
      try {
        const res = await this.#fetch(url, {
          headers: {
            ...this.#headers,
            ...this.#sessionHeaders(),
            Accept: 'text/event-stream',
            ...(lastEventId === '' ? {} : { 'Last-Event-ID': lastEventId }),
          },
          signal,
        });
        if (!res.ok || !res.body || !acceptsEventStream(res.headers.get('content-type'))) {
          await res.body?.cancel().catch(() => undefined);
          if (PERMANENT.has(res.status)) {
            this.onerror?.(new HttpStatusError(res.status));
            return;
          }
          throw new HttpStatusError(res.status);
        }
        failures = 0;
        await readSseStream(res.body, parser, (event) => this.#deliverEvent(event));
      } catch (e) {
        if (signal.aborted) return;
        this.onerror?.(e instanceof HttpTransportError ? e : new HttpTransportError('ERR_HTTP_FETCH', { cause: e }));
      } finally {
        lastEventId = parser.lastEventId;
        retry = parser.retry ?? retry;
      }
      if (signal.aborted) return;
      failures++;
      if (failures > this.#maxReconnectAttempts) {
        this.onerror?.(new HttpTransportError('ERR_HTTP_EVENTS_GAVE_UP'));
        return;
      }
      const delay = Math.min(this.#maxReconnectDelayMs, (retry ?? this.#reconnectDelayMs) * 2 ** (failures - 1));
      await sleep(delay, signal);
    }
  }
}
