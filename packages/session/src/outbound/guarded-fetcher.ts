import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { readCappedBody } from '../capped-body.js';
import { guardedSocketOptions, type ResolveAll, systemResolveAll } from './guarded-lookup.js';
import { OutboundFetchError } from './outbound-errors.js';
import { classifyUrl, type OutboundRules } from './outbound-rules.js';

export interface GuardedFetcherOptions {
  /**
   * Private, loopback, link-local and unique-local addresses may be reached, and plain http on
   * loopback: closed deployments and tests only (`--allow-private-peers`). Default false.
   */
  readonly allowPrivate?: boolean;
  /**
   * Origins the operator configured (`https://peer.example`): reached as given, whatever their
   * address (a peer on a private network, or on loopback in tests). Default: none.
   */
  readonly trusted?: (origin: string) => boolean;
  /** Extra CA certificates (PEM) for HTTPS, besides Node's own. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** DNS lookup of every address of a host (default node:dns `lookup` with `all: true`). */
  readonly resolveAll?: ResolveAll;
  /** Longest wait for an answer's headers, in ms (default 10 s); a document's body has its own cap. */
  readonly timeoutMs?: number;
}

/** What a document fetch gives back: the status, the headers and at most `maxBytes` of body. */
export interface FetchedDocument {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Uint8Array;
}

export interface DocumentRequest {
  /** Largest body read; past it `too_large` (declared or streamed). */
  readonly maxBytes: number;
  /** The whole fetch, body included, ends within this long (`timeout`). */
  readonly timeoutMs: number;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

/** A `fetch` on the guard, for clients that stream (an HTTP + SSE link to a peer). */
export type GuardedFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The one way the relay reaches servers on someone else's behalf (docs/federation-profile.md,
 * "Fetching on a client's behalf"): federation's well-known documents and card lookups, did:web
 * documents, peer links. Errors are `OutboundFetchError`s.
 */
export interface GuardedFetcher {
  /** http(s) through the guard; a 3xx is `redirect` (never followed), headers within the timeout. */
  readonly fetch: GuardedFetch;
  /** A document within a size and a time cap (body included). */
  fetchDocument(url: string | URL, request: DocumentRequest): Promise<FetchedDocument>;
  /**
   * The socket options a client (a WebSocket to a peer) must connect to `url` with: a checking
   * `lookup` for a guarded URL, nothing for a trusted one. Throws `OutboundFetchError`.
   */
  socketOptions(url: string | URL): { readonly lookup?: LookupFunction };
  /** Whether `url` may be asked for at all (its scheme and origin), before any address is known. */
  permits(url: string | URL): boolean;
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A guarded fetcher for Node: https only (http on loopback only with `allowPrivate`), no
 * redirects, time caps, and no private, loopback, link-local or unique-local address, checked on
 * the address connected (`guardedSocketOptions`: after DNS, so no rebinding), unless private
 * addresses are allowed. Origins the operator configured are reached as given.
 */
export function createGuardedFetcher(options: GuardedFetcherOptions = {}): GuardedFetcher {
  const rules: OutboundRules = {
    allowPrivate: options.allowPrivate ?? false,
    trusted: options.trusted ?? (() => false),
  };
  const resolveAll = options.resolveAll ?? systemResolveAll;
  const headersTimeoutMs = options.timeoutMs ?? 10_000;
  const ca = options.ca as string | Buffer | Array<string | Buffer> | undefined;

  const socketOptions = (input: string | URL): { readonly lookup?: LookupFunction } => {
    const url = parse(input);
    return classifyUrl(url, rules) === 'trusted' ? {} : guardedSocketOptions(url, rules, resolveAll);
  };

  const fetch: GuardedFetch = (input, init = {}) => {
    const url = parse(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return Promise.reject(new OutboundFetchError('not_allowed'));
    let socket: { readonly lookup?: LookupFunction };
    try {
      socket = socketOptions(url);
    } catch (e) {
      return Promise.reject(e);
    }
    return send(url, init, socket, { headersTimeoutMs, ca });
  };

  return {
    fetch,
    socketOptions,
    permits(input) {
      try {
        classifyUrl(parse(input), rules);
        return true;
      } catch {
        return false;
      }
    },
    async fetchDocument(url, req) {
      const signal = req.signal
        ? AbortSignal.any([req.signal, AbortSignal.timeout(req.timeoutMs)])
        : AbortSignal.timeout(req.timeoutMs);
      const response = await fetch(url, {
        method: req.method ?? 'GET',
        ...(req.headers ? { headers: req.headers } : {}),
        ...(req.body === undefined ? {} : { body: req.body }),
        signal,
      });
      const body = await readCappedBody(
        response,
        req.maxBytes,
        signal,
        (failure) => new OutboundFetchError(failure === 'network' ? 'unreachable' : failure),
      );
      return { status: response.status, headers: response.headers, body };
    },
  };
}

function parse(input: string | URL): URL {
  try {
    return new URL(input);
  } catch {
    throw new OutboundFetchError('not_allowed');
  }
}

interface SendOptions {
  readonly headersTimeoutMs: number;
  readonly ca: string | Buffer | Array<string | Buffer> | undefined;
}

/** One request on node:http(s), no redirects. */
function send(
  url: URL,
  init: RequestInit,
  socket: { readonly lookup?: LookupFunction },
  o: SendOptions,
): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(new OutboundFetchError('timeout'));
  const body = init.body;
  if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    return Promise.reject(new TypeError('the guarded fetch sends a string or bytes body only'));
  }
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, key) => {
    headers[key] = value;
  });
  const secure = url.protocol === 'https:';
  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const fail = (error: OutboundFetchError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(error);
    };
    const options = {
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: init.method ?? 'GET',
      headers,
      // A guarded request gets a socket of its own (a pooled one may be to another address); a
      // configured origin shares the default agent's kept-alive sockets.
      ...(socket.lookup ? { agent: false as const, lookup: socket.lookup } : {}),
      ...(signal ? { signal } : {}),
      ...(secure ? { minVersion: 'TLSv1.2' as const, ...(o.ca ? { ca: o.ca } : {}) } : {}),
    };
    const onResponse = (res: IncomingMessage) => {
      if (settled) {
        res.destroy();
        return;
      }
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) return fail(new OutboundFetchError('redirect'));
      if (status < 200 || status > 599) return fail(new OutboundFetchError('unreachable'));
      settled = true;
      clearTimeout(timer);
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
      }
      if (NULL_BODY.has(status)) {
        res.resume();
        resolve(new Response(null, { status, headers: responseHeaders }));
        return;
      }
      resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status, headers: responseHeaders }));
    };
    const req: ClientRequest = secure ? httpsRequest(options, onResponse) : httpRequest(options, onResponse);
    const timer = setTimeout(() => fail(new OutboundFetchError('timeout')), o.headersTimeoutMs);
    req.on('error', (e) => {
      if (e instanceof OutboundFetchError) return fail(e);
      fail(new OutboundFetchError(signal?.aborted ? 'timeout' : 'unreachable'));
    });
    req.end(body ?? undefined);
  });
}
