import { type Context, Hono } from 'hono';
import { TokenBuckets } from '../coordination/memory/token-buckets.js';
import { MemoryWakeUps } from '../coordination/memory/wake-ups.js';
import { getAllow, putAllow } from './allow.js';
import { lookupCard, postCard } from './cards.js';
import type { BoxContext } from './context.js';
import { markDelivered } from './delivered.js';
import { BoxApiError } from './errors.js';
import { streamEvents } from './event-stream.js';
import { fetchEvents } from './fetch-events.js';
import { limitsAnswer } from './limits-answer.js';
import { BoxMetrics, type BoxRoute } from './metrics.js';
import { type BoxAppOptions, type RateLimitOptions, resolveBoxOptions } from './options.js';
import { publishEvent } from './publish.js';
import { errorResponse, internalErrorResponse, jsonResponse } from './respond.js';
import { StreamRegistry } from './stream-registry.js';
import { type BoxSweeper, startBoxSweeper } from './sweeper.js';
import { defaultVerifyThreads, SignatureVerifyPool } from './verify-pool.js';

type Handler = (c: Context, box: BoxContext) => Promise<Response>;
type Method = 'GET' | 'POST' | 'PUT';

interface Route {
  readonly method: Method;
  readonly path: string;
  /** Its name in the metrics and logs. */
  readonly name: BoxRoute;
  readonly handler: Handler;
  /** Only on directory boxes; elsewhere the route answers 404 like any unknown path. */
  readonly directoryOnly?: boolean;
}

/** The routes of docs/ohan-profile.md, "The box API", relative to the mount point (`BOX_API_PREFIX`). */
const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/limits', name: 'limits', handler: async (_c, box) => jsonResponse(200, limitsAnswer(box)) },
  { method: 'POST', path: '/events', name: 'publish', handler: publishEvent },
  { method: 'GET', path: '/events', name: 'fetch', handler: fetchEvents },
  { method: 'GET', path: '/events/stream', name: 'stream', handler: streamEvents },
  { method: 'POST', path: '/delivered', name: 'delivered', handler: markDelivered },
  { method: 'PUT', path: '/allow', name: 'allow_put', handler: putAllow },
  { method: 'GET', path: '/allow', name: 'allow_get', handler: getAllow },
  { method: 'POST', path: '/cards', name: 'cards', handler: postCard, directoryOnly: true },
  { method: 'POST', path: '/cards/lookup', name: 'cards_lookup', handler: lookupCard, directoryOnly: true },
];

/** The box app: a Hono app with a `close()` that ends open streams and stops the sweeper. */
export type BoxApp = Hono & {
  /** Ends every open event stream, stops the expiry sweeper and the verify workers (the store is the host's to close). */
  close(): Promise<void>;
  /** Open event streams (for the host's metrics). */
  readonly openStreams: number;
  /** The box's metrics as Prometheus text (requests, refusals, the store's totals), for the host's `/metrics`. */
  metricsText(): Promise<string>;
};

/**
 * The OHAN box API (`ohan.relay.1`, docs/ohan-profile.md) over a `BoxStore`, as a Hono app with
 * relative routes: mount it with `relay.route(BOX_API_PREFIX, createBoxApp(...))`. It keeps nothing
 * on disk itself (nonces, rate windows and stream wake-ups live in memory, or are the cluster's
 * shared ones given in the options) and never logs.
 */
export function createBoxApp(input: BoxAppOptions): BoxApp {
  const options = resolveBoxOptions(input);
  const bucketsOf = (rate: RateLimitOptions | false) =>
    rate === false ? undefined : new TokenBuckets({ ...rate, now: options.now });
  const threads = options.verifyThreads ?? defaultVerifyThreads();
  const streamLimits = { maxPerKey: options.maxStreamsPerKey, max: options.maxStreams };
  const box: BoxContext = {
    options,
    limiter: options.rateLimit === false ? undefined : (options.limiter ?? bucketsOf(options.rateLimit)),
    sourceLimiter:
      options.sourceOf === undefined || options.sourceRateLimit === false
        ? undefined
        : (options.sourceLimiter ?? bucketsOf(options.sourceRateLimit)),
    wakeUps: options.wakeUps ?? new MemoryWakeUps({ limits: streamLimits }),
    streams: new StreamRegistry(streamLimits),
    verifier: threads > 0 ? new SignatureVerifyPool(threads) : undefined,
  };
  // Wake-ups sent while a shared link was down are lost: every open stream reads its queue again.
  const stopRescans = box.wakeUps.onReconnect(() => box.streams.wakeAll());

  const metrics = new BoxMetrics();
  const app = new Hono();
  app.onError((error) => {
    if (error instanceof BoxApiError) {
      metrics.refused(error.code);
      return errorResponse(error);
    }
    metrics.refused('internal');
    options.onError(error);
    return internalErrorResponse();
  });
  // Every request counted and, at the host's debug level, logged: route and status only, never a
  // key, an address or content.
  const answered = (route: BoxRoute, status: number) => {
    metrics.request(route, status);
    options.onRequest?.(route, status);
  };
  app.notFound(() => errorResponse(new BoxApiError('not_found')));
  if (box.sourceLimiter !== undefined) {
    // Every route, signed or not, before any work: a fresh key per request resets nothing here.
    const limiter = box.sourceLimiter;
    const sourceOf = options.sourceOf!;
    app.use('*', async (c, next) => {
      const source = sourceOf(c);
      if (source !== undefined && !(await limiter.take(source))) {
        metrics.refused('rate_limited');
        answered('other', 429);
        return errorResponse(new BoxApiError('rate_limited'));
      }
      await next();
    });
  }
  for (const route of ROUTES) {
    if (route.directoryOnly && !options.directory) continue;
    app.on(route.method, route.path, async (c) => {
      try {
        const response = await route.handler(c, box);
        answered(route.name, response.status);
        return response;
      } catch (error) {
        answered(route.name, error instanceof BoxApiError ? error.status : 500);
        throw error;
      }
    });
  }
  // A catch-all rather than only `notFound`: a parent app that mounts this one answers unknown
  // paths with its own 404, and the box's must stay in the box's error shape.
  app.all('*', () => errorResponse(new BoxApiError('not_found')));

  const sweeper: BoxSweeper | undefined =
    options.sweepIntervalMs > 0
      ? startBoxSweeper(options.store, {
          intervalMs: options.sweepIntervalMs,
          lock: options.sweepLock,
          now: options.now,
          onError: options.onError,
        })
      : undefined;
  return Object.defineProperties(app, {
    close: {
      value: async () => {
        stopRescans();
        box.streams.closeAll();
        await Promise.all([sweeper?.close(), box.verifier?.close()]);
      },
    },
    openStreams: { get: () => box.streams.size },
    metricsText: { value: () => metrics.render(options.store, box.streams.size) },
  }) as BoxApp;
}
