import { TransportError } from '../errors.js';

/** Why an HTTP transport failed. Stable codes; fixed messages that carry no peer data. */
export type HttpTransportErrorCode =
  /** `http:` to a non-loopback host without `allowInsecure` (the spec requires TLS). */
  | 'ERR_HTTP_INSECURE_URL'
  | 'ERR_HTTP_ALREADY_STARTED'
  /** `send` after `close()`, or on a server-side session that has ended. */
  | 'ERR_HTTP_CLOSED'
  /** The request did not reach the server or the reply did not arrive. */
  | 'ERR_HTTP_FETCH'
  /** The server answered with a non-2xx status (`HttpStatusError`). */
  | 'ERR_HTTP_STATUS'
  /** A reply body over `maxMessageBytes`. */
  | 'ERR_HTTP_REPLY_TOO_LARGE'
  /** The event stream kept failing and the reconnect attempts ran out. */
  | 'ERR_HTTP_EVENTS_GAVE_UP';

const messages: Readonly<Record<HttpTransportErrorCode, string>> = {
  ERR_HTTP_INSECURE_URL: 'insecure HTTP URL (use https:, or set allowInsecure)',
  ERR_HTTP_ALREADY_STARTED: 'transport already started',
  ERR_HTTP_CLOSED: 'transport closed',
  ERR_HTTP_FETCH: 'HTTP request failed',
  ERR_HTTP_STATUS: 'HTTP error status',
  ERR_HTTP_REPLY_TOO_LARGE: 'HTTP reply too large',
  ERR_HTTP_EVENTS_GAVE_UP: 'event stream reconnect attempts exhausted',
};

export class HttpTransportError extends TransportError {
  declare readonly code: HttpTransportErrorCode;
  constructor(code: HttpTransportErrorCode, options?: { cause?: unknown }) {
    super(code, messages[code], options);
    this.name = 'HttpTransportError';
  }
}

/** A non-2xx reply. A JSON-RPC body in it was already delivered to `onmessage`. */
export class HttpStatusError extends HttpTransportError {
  readonly status: number;
  constructor(status: number) {
    super('ERR_HTTP_STATUS');
    this.name = 'HttpStatusError';
    this.status = status;
  }
}
