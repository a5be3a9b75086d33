import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Connection, WmpServer } from '@wmp/session';
import {
  attachWebSocketServer,
  createHttpBinding,
  gateByReadRate,
  keyedSessionTokens,
  requestAddress,
  trustedProxySet,
  type WebSocketAttachment,
} from '@wmp/transports/node';
import type { Context, Hono } from 'hono';
import type { RelayStores } from '../storage/contracts/relay-stores.js';
import type { RelayConfig } from './config.js';
import { createRelayCore, type RelayCore } from './core.js';
import { withNodeFederation } from './federation/node-transport.js';
import { createRelayApp } from './http/http-app.js';
import { isGroupSession } from './routing/recipients.js';
import { sessionTokenKey } from './support/identity.js';
import { tlsServerOptions } from './support/tls.js';

/** What a monitor reads: answered whatever its source address has sent (decision 0468). */
const MONITORING_PATHS: ReadonlySet<string> = new Set(['/health', '/metrics']);

export interface Relay {
  /** Everything but the WebSocket upgrade, for `app.fetch` or mounting. */
  readonly app: Hono;
  readonly server: WmpServer;
  readonly stores: RelayStores;
  readonly core: RelayCore;
  /** The relay's did:key (signs relay_chain entries). */
  readonly id: string;
  /**
   * The source a request on the relay's port is limited by: its client address behind
   * `trustedProxies`, as the WMP bindings see it (undefined for loopback unless `limitLoopback`).
   * The box app's `sourceOf`.
   */
  requestSource(c: Context): string | undefined;
  /** Listens on `host:port` (default 127.0.0.1, any free port) and starts the expiry sweeper. */
  listen(): Promise<{ port: number; url: string }>;
  /**
   * Graceful close: stop accepting, close WebSocket connections and SSE streams, stop the
   * sweeper, then close the stores (queued writes are committed first).
   */
  close(): Promise<void>;
}

/** The WMP relay on one port (Node): HTTP + SSE and WebSocket at `/wmp`, well-known, health, metrics, box. */
export function createRelay(config: RelayConfig = {}): Relay {
  const federation = withNodeFederation(config.federation);
  const core = createRelayCore(federation === undefined ? config : { ...config, federation });
  const { limits } = core.config;
  const logger = core.logger;
  const { timings } = core.config;
  const trustedProxies = trustedProxySet(config.trustedProxies);
  const binding = createHttpBinding({
    trustedProxies,
    onTransport: (transport, _request, context) => core.connect(transport, context),
    // DELETE /wmp logs out: the session goes from the store, so no node takes its tokens again.
    endSession: (connection, sessionId) => core.endSession(connection as Connection, sessionId),
    // A stream opened on a node whose HTTP session outlived a close on another node.
    sessionLive: (sessionId) => core.sessionLive(sessionId),
    // Keyed by the relay key: a node of a cluster carries an HTTP session another node began.
    sessionTokens: keyedSessionTokens(sessionTokenKey(core.identity)),
    maxBodyBytes: limits.maxMessageBytes,
    maxUnauthenticatedBodyBytes: limits.maxUnauthenticatedBodyBytes,
    bodyTimeoutMs: timings.bodyTimeoutMs,
    bodyBudget: core.budgets.bodies,
    replayBudget: core.budgets.replay,
    outboundBudget: core.budgets.outbound,
    maxQueuedBytes: limits.maxBufferedBytesPerConnection,
    maxSessions: limits.maxConnections,
    allowSessionIdOnly:
      config.httpSessionIdBinding === true
        ? async (id) => {
            const session = await core.stores.sessions.get(id);
            return session === undefined ? 'unknown' : !isGroupSession(session);
          }
        : false,
  });
  let closing = false;
  const app = createRelayApp({
    core,
    binding: binding.app,
    box: config.box,
    keyPackages: config.keyPackages,
    privacy: config.privacy,
    erds: core.erds,
    recipientMetadata: core.recipientMetadata,
    maxQueued: core.stores.queue.limits.maxQueued,
    sourceOf: (c) => core.sourceOf(requestAddress(c, trustedProxies)),
    closing: () => closing,
  });

  let http: Server | undefined;
  let ws: WebSocketAttachment | undefined;
  let closed: Promise<void> | undefined;

  return {
    app,
    server: core.server,
    stores: core.stores,
    core,
    id: core.identity.did,
    requestSource: (c) => core.sourceOf(requestAddress(c, trustedProxies)),

    async listen() {
      if (http) throw new Error('relay already listening');
      const host = config.host ?? '127.0.0.1';
      // Each request is charged to its source's read rate before anything parses it.
      const gate = { rate: core.readRate, trustedProxies, sourceOf: core.sourceOf, ungatedPaths: MONITORING_PATHS };
      // node-server calls `createServer(serverOptions, listener)`: the gate goes in between.
      const gated = (create: (options: object, listener: RequestListener) => Server) =>
        ((options: object, listener: RequestListener) =>
          create(options, gateByReadRate(listener, gate))) as unknown as typeof createHttpServer;
      http = await new Promise<Server>((resolve, reject) => {
        const options = { fetch: app.fetch, port: config.port ?? 0, hostname: host };
        const s = serve(
          config.tls
            ? {
                ...options,
                createServer: gated(createHttpsServer),
                serverOptions: tlsServerOptions(config.tls),
              }
            : { ...options, createServer: gated(createHttpServer) },
          () => resolve(s as Server),
        );
        (s as Server).once('error', reject);
      });
      // A request (headers and body) must arrive in time: a client that trickles bytes would
      // otherwise hold its memory until Node's 300 s default (docs/architecture.md, "Bounds").
      http.requestTimeout = timings.bodyTimeoutMs;
      http.headersTimeout = Math.min(timings.bodyTimeoutMs, 15_000);
      ws = attachWebSocketServer(http, {
        path: '/wmp',
        maxPayload: limits.maxMessageBytes,
        maxConnections: limits.maxConnections,
        maxBufferedBytes: limits.maxBufferedBytesPerConnection,
        outboundBudget: core.budgets.outbound,
        trustedProxies,
        readRate: core.readRate,
        readSourceOf: core.sourceOf,
        onTransport: async (transport) => void (await core.connect(transport)),
      });
      const { port } = http.address() as AddressInfo;
      const local = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (config.publicUrl === undefined) core.origin = local;
      core.start();
      logger.info('relay.listening', { port, relay_id: core.identity.did });
      return { port, url: core.origin };
    },

    close() {
      closed ??= (async () => {
        closing = true;
        // Stop accepting first, then end what is open (WS close 1001, SSE streams, waiting POSTs).
        const server = http;
        const stopped = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
        await ws?.close();
        await binding.close();
        await core.server.close();
        server?.closeAllConnections();
        await stopped;
        await core.stop();
        await core.stores.close();
        logger.info('relay.closed');
      })();
      return closed;
    },
  };
}
