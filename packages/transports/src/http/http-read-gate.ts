import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '@wmp/jsonrpc-envelope';
import { clientAddress } from '../client-address.js';
import type { SourceReadRate } from '../read-rate.js';
import { bindingError } from './http-replies.js';

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

export interface HttpReadGateOptions {
  readonly rate: SourceReadRate;
  /** Reverse proxies whose `X-Forwarded-For` names the client (`clientAddress`). */
  readonly trustedProxies: ReadonlySet<string>;
  /** The source a client address counts as, or undefined for one that is not bound (a local proxy). */
  readonly sourceOf: (address: string | undefined) => string | undefined;
  /**
   * Paths whose GETs are answered whatever the source has read (health and metrics: a monitor
   * behind the same address as a flood must still see the server as it is). Exact, query included.
   */
  readonly ungatedPaths?: ReadonlySet<string>;
}

/** The binding's own -31007 refusal, made once: an over-rate source costs nothing per request. */
const REFUSAL = JSON.stringify(bindingError(ErrorCode.RateLimited, 'read rate'));

/** The declared body length; a body without one is bounded where it is read (and costs a request). */
function declaredLength(request: IncomingMessage): number {
  const length = Number(request.headers['content-length']);
  return Number.isSafeInteger(length) && length > 0 ? length : 0;
}

/**
 * Charges each HTTP request to its source's read rate before anything parses it (no `Request`
 * object, no body read, no route); a source over its rate gets `429` with `Retry-After` and the
 * connection closed, its body unread. Node-only: it wraps a `node:http` request listener.
 */
export function gateByReadRate(listener: RequestListener, options: HttpReadGateOptions): RequestListener {
  const { rate, trustedProxies, sourceOf } = options;
  const ungated = options.ungatedPaths ?? new Set<string>();
  return (request, response) => {
    if (request.method === 'GET' && ungated.has(request.url ?? '')) {
      listener(request, response);
      return;
    }
    const forwarded = request.headers['x-forwarded-for'];
    const source = sourceOf(
      clientAddress(
        request.socket.remoteAddress,
        Array.isArray(forwarded) ? forwarded.join(',') : forwarded,
        trustedProxies,
      ),
    );
    const waitMs = source === undefined ? 0 : rate.charge(source, declaredLength(request));
    if (waitMs === 0) {
      listener(request, response);
      return;
    }
    response.writeHead(429, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'retry-after': String(Math.ceil(waitMs / 1000)),
      connection: 'close',
    });
    response.end(REFUSAL);
  };
}
