import { RequestTimeoutError } from '@wmp/session';
import { type FetchLike, readBoundedBody } from '@wmp/transports';
import { WmpClientError } from './errors.js';

export type Binding = 'websocket' | 'http';

/** Where and how the client connects. */
export interface Endpoint {
  readonly binding: Binding;
  /** The WebSocket URL, or the HTTP POST endpoint. */
  readonly url: string;
  /** The SSE endpoint of the HTTP binding, when the relay names one. */
  readonly eventsUrl?: string;
  /** The relay's `http(s)` origin: what stored state is kept under. */
  readonly origin: string;
  /** The `relay_id` its well-known document names, when it was read. */
  readonly relayId?: string;
}

export interface ResolveEndpointOptions {
  readonly transport: 'auto' | Binding;
  readonly fetch: FetchLike;
  /** Whether a WebSocket constructor is at hand (injected or global). */
  readonly webSocket: boolean;
  readonly signal?: AbortSignal;
  /** How long the well-known document may take (answer and body); default 30 s. */
  readonly timeoutMs?: number;
}

export const WELL_KNOWN_PATH = '/.well-known/wmp-configuration';
const DEFAULT_PATH = '/wmp';
/** The well-known document is small; a larger answer is not one. */
const MAX_CONFIGURATION_BYTES = 64 * 1024;

/** The `http(s)` origin of a `ws(s)`/`http(s)` URL. */
function httpOrigin(url: URL): string {
  const u = new URL(url);
  if (u.protocol === 'ws:') u.protocol = 'http:';
  if (u.protocol === 'wss:') u.protocol = 'https:';
  return u.origin;
}

function parseUrl(url: string | URL, schemes: readonly string[]): URL | undefined {
  try {
    const u = new URL(url);
    return schemes.includes(u.protocol) ? u : undefined;
  } catch {
    return undefined;
  }
}

interface Offered {
  readonly websocket: string | undefined;
  readonly https: string | undefined;
  readonly sse: string | undefined;
  readonly preferred: Binding | undefined;
  readonly relayId: string | undefined;
}

/** A `relay_id` worth comparing with: a DID or x509 identifier of sane length. */
function relayIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= 2048 && /^(did|x509):/.test(value) ? value : undefined;
}

function urlField(endpoints: Record<string, unknown>, keys: readonly string[], schemes: readonly string[]) {
  for (const key of keys) {
    const value = endpoints[key];
    if (typeof value === 'string' && parseUrl(value, schemes)) return value;
  }
  return undefined;
}

/**
 * Reads what `/.well-known/wmp-configuration` offers (transport §7.1): the spec's
 * `websocket`/`https`/`sse` endpoints or go-wmp's `rpc`/`events`. Undefined when the relay has
 * no such document (404); `ERR_CLIENT_DISCOVERY` when it answers something else that is not one.
 */
export async function fetchConfiguration(
  origin: string,
  options: ResolveEndpointOptions,
): Promise<Offered | undefined> {
  // A timer of our own (AbortSignal.timeout's does not keep Node running): a server that accepts
  // and never answers would otherwise leave the connect waiting for ever.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new RequestTimeoutError()), options.timeoutMs ?? 30_000);
  const onAbort = () => deadline.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await readConfiguration(origin, options, deadline.signal);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

async function readConfiguration(
  origin: string,
  options: ResolveEndpointOptions,
  signal: AbortSignal,
): Promise<Offered | undefined> {
  let res: Response;
  try {
    res = await options.fetch(`${origin}${WELL_KNOWN_PATH}`, { headers: { Accept: 'application/json' }, signal });
  } catch (e) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw new WmpClientError('ERR_CLIENT_DISCOVERY', { cause: e });
  }
  if (res.status === 404) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const bytes = res.ok
    ? await readBoundedBody(res.body, MAX_CONFIGURATION_BYTES, res.headers.get('content-length')).catch(
        (e: unknown) => {
          throw new WmpClientError('ERR_CLIENT_DISCOVERY', { cause: e });
        },
      )
    : undefined;
  if (!res.ok) await res.body?.cancel().catch(() => undefined);
  let doc: unknown;
  try {
    doc = bytes === undefined ? undefined : JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    doc = undefined;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new WmpClientError('ERR_CLIENT_DISCOVERY');
  const { endpoints, preferred_transport, relay_id } = doc as {
    endpoints?: unknown;
    preferred_transport?: unknown;
    relay_id?: unknown;
  };
  const map =
    endpoints !== null && typeof endpoints === 'object' && !Array.isArray(endpoints)
      ? (endpoints as Record<string, unknown>)
      : {};
  return {
    websocket: urlField(map, ['websocket'], ['ws:', 'wss:']),
    https: urlField(map, ['https', 'rpc'], ['http:', 'https:']),
    sse: urlField(map, ['sse', 'events'], ['http:', 'https:']),
    preferred: preferred_transport === 'websocket' ? 'websocket' : preferred_transport === 'https' ? 'http' : undefined,
    relayId: relayIdOf(relay_id),
  };
}

/**
 * Picks the binding and endpoint for `url`: a `ws(s):` URL is a WebSocket endpoint, an
 * `http(s):` URL with a path is an HTTP endpoint, and a bare `http(s):` origin is looked up in
 * its well-known document (its preferred transport first; `/wmp` when it has none). The
 * `transport` option narrows the choice.
 */
export async function resolveEndpoint(url: string | URL, options: ResolveEndpointOptions): Promise<Endpoint> {
  const u = parseUrl(url, ['ws:', 'wss:', 'http:', 'https:']);
  if (!u) throw new WmpClientError('ERR_CLIENT_URL');
  const origin = httpOrigin(u);
  const wanted = options.transport;
  const isWs = u.protocol === 'ws:' || u.protocol === 'wss:';
  const bare = !isWs && (u.pathname === '/' || u.pathname === '') && u.search === '';

  if (!bare) {
    const binding: Binding = wanted === 'auto' ? (isWs ? 'websocket' : 'http') : wanted;
    if (binding === 'websocket' && !options.webSocket) throw new WmpClientError('ERR_CLIENT_NO_TRANSPORT');
    const target = new URL(u);
    if (binding === 'http' && isWs) target.protocol = u.protocol === 'wss:' ? 'https:' : 'http:';
    return { binding, url: target.toString(), origin };
  }

  const offered = (await fetchConfiguration(origin, options)) ?? {
    websocket: `${origin.replace(/^http/, 'ws')}${DEFAULT_PATH}`,
    https: `${origin}${DEFAULT_PATH}`,
    sse: undefined,
    preferred: undefined,
    relayId: undefined,
  };
  const order: Binding[] =
    wanted !== 'auto' ? [wanted] : offered.preferred === 'http' ? ['http', 'websocket'] : ['websocket', 'http'];
  const known = offered.relayId === undefined ? {} : { relayId: offered.relayId };
  for (const binding of order) {
    if (binding === 'websocket' && offered.websocket && options.webSocket) {
      return { binding, url: offered.websocket, origin, ...known };
    }
    if (binding === 'http' && offered.https) {
      return { binding, url: offered.https, origin, ...(offered.sse ? { eventsUrl: offered.sse } : {}), ...known };
    }
  }
  throw new WmpClientError('ERR_CLIENT_NO_TRANSPORT');
}
