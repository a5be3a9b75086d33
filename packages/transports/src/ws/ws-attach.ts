import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { clientAddress } from '../client-address.js';
import type { SourceReadRate } from '../read-rate.js';
import { tlsPeerCertificates } from '../tls-peer.js';
import { DEFAULT_MAX_MESSAGE_BYTES, WMP_SUBPROTOCOL, WsCloseCode } from './ws-protocol.js';
import { WebSocketServerTransport, type WebSocketServerTransportOptions } from './ws-server.js';

/** Anything that emits Node's HTTP `'upgrade'` event (`http.Server`, `https.Server`, node-server's server). */
export interface UpgradeEmitter {
  on(event: 'upgrade', listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
  off(event: 'upgrade', listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
}

export interface AttachWebSocketServerOptions
  extends Omit<
    WebSocketServerTransportOptions,
    'maxMessageBytes' | 'closeTimeoutMs' | 'remoteAddress' | 'peerCertificates' | 'readRate'
  > {
  /** The upgrade path; default `/wmp` (transport §3.1). Upgrades on other paths get 404. */
  readonly path?: string;
  /** Largest frame, in bytes, refused from its header before buffering (1009); default 1 MiB. */
  readonly maxPayload?: number;
  /** Most open connections (handshakes included); more get 503. Default 10 000. */
  readonly maxConnections?: number;
  /**
   * Decides on a browser's `Origin`. Default: every origin, because WMP authenticates inside the
   * session (or with a Bearer header), never with cookies a foreign page could ride on.
   */
  readonly checkOrigin?: (origin: string | undefined, request: IncomingMessage) => boolean;
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (`clientAddress`): a connection from
   * one of them gets the forwarded address as its `remoteAddress`. Default: none.
   */
  readonly trustedProxies?: ReadonlySet<string>;
  /** How long `close()` lets connections finish the closing handshake before terminating them; default 1 s. */
  readonly closeGraceMs?: number;
  /** How fast each source is read; a source over it is paused (default: no bound). */
  readonly readRate?: SourceReadRate;
  /**
   * The source a client address counts as for `readRate`, or undefined for one that is not bound
   * (a local proxy). Default: the address itself.
   */
  readonly readSourceOf?: (address: string | undefined) => string | undefined;
  /** Called for every accepted connection. A throw or rejection closes it with 1011. */
  onTransport(transport: WebSocketServerTransport, request: IncomingMessage): void | Promise<void>;
}

export interface WebSocketAttachment {
  /** The `ws` server (noServer mode), for callers that need its events. */
  readonly wss: WebSocketServer;
  /** Open connections, handshakes included. */
  readonly connections: number;
  /** Stops accepting upgrades and closes every connection (1001, then terminate after the grace). */
  close(): Promise<void>;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

function refuse(socket: Duplex, status: number): void {
  // Same shape as ws's own abortHandshake: end, then destroy once the response is flushed.
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

const same = (address: string | undefined): string | undefined => address;

function pathnameOf(url: string | undefined): string | undefined {
  try {
    return new URL(url ?? '/', 'http://upgrade.invalid').pathname;
  } catch {
    return undefined;
  }
}

/**
 * Destroys the socket on an error. Its own function: a listener created inside the upgrade
 * handler would share that handler's closure scope and keep the upgrade request (headers and
 * all) alive for as long as the connection lives.
 */
function guard(socket: Duplex): void {
  socket.on('error', () => socket.destroy());
}

/**
 * Serves the WebSocket binding on an existing HTTP server: a `ws` server in noServer mode takes
 * upgrades on `path`, echoes the `wmp.v1` subprotocol, refuses frames over `maxPayload` before
 * buffering them, and hands each connection to `onTransport` as a `WebSocketServerTransport`.
 * Nothing is logged (no addresses, no payloads).
 */
export function attachWebSocketServer(
  server: UpgradeEmitter,
  options: AttachWebSocketServerOptions,
): WebSocketAttachment {
  const path = options.path ?? '/wmp';
  const maxPayload = options.maxPayload ?? DEFAULT_MAX_MESSAGE_BYTES;
  const maxConnections = options.maxConnections ?? 10_000;
  const closeGraceMs = options.closeGraceMs ?? 1_000;
  const trusted = options.trustedProxies ?? new Set<string>();
  const transportOptions: WebSocketServerTransportOptions = {
    maxMessageBytes: maxPayload,
    ...(options.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.pingIntervalMs }),
    ...(options.pongTimeoutMs === undefined ? {} : { pongTimeoutMs: options.pongTimeoutMs }),
    ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
    ...(options.outboundBudget === undefined ? {} : { outboundBudget: options.outboundBudget }),
  };
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload,
    // Echo wmp.v1 when offered; a client that offers none still connects (the spec says SHOULD).
    handleProtocols: (protocols) => (protocols.has(WMP_SUBPROTOCOL) ? WMP_SUBPROTOCOL : false),
  });
  let live = 0;
  let closed = false;

  const accept = (ws: WebSocket, request: IncomingMessage): void => {
    const forwarded = request.headers['x-forwarded-for'];
    const address = clientAddress(
      request.socket.remoteAddress,
      Array.isArray(forwarded) ? forwarded.join(',') : forwarded,
      trusted,
    );
    // On an HTTPS server: the client certificate of the handshake, for `mtls`.
    const certificates = tlsPeerCertificates(request.socket);
    const source = options.readRate === undefined ? undefined : (options.readSourceOf ?? same)(address);
    const transport = new WebSocketServerTransport(ws, {
      ...transportOptions,
      ...(address === undefined ? {} : { remoteAddress: address }),
      ...(certificates === undefined ? {} : { peerCertificates: certificates }),
      ...(source === undefined ? {} : { readRate: { rate: options.readRate!, source } }),
    });
    Promise.resolve()
      .then(() => options.onTransport(transport, request))
      .catch(() => ws.close(WsCloseCode.InternalError));
  };
  const released = (): void => {
    live--;
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    guard(socket);
    const status =
      pathnameOf(request.url) !== path
        ? 404
        : closed || live >= maxConnections
          ? 503
          : options.checkOrigin && !options.checkOrigin(request.headers.origin, request)
            ? 403
            : 0;
    if (status !== 0) {
      refuse(socket, status);
      return;
    }
    // Counted on the raw socket so that failed handshakes give their slot back too.
    live++;
    socket.once('close', released);
    wss.handleUpgrade(request, socket, head, (ws) => accept(ws, request));
  };
  server.on('upgrade', onUpgrade);

  return {
    wss,
    get connections() {
      return live;
    },
    async close() {
      if (closed) return;
      closed = true;
      server.off('upgrade', onUpgrade);
      const clients = [...wss.clients];
      await Promise.all(
        clients.map(
          (ws) =>
            new Promise<void>((resolve) => {
              if (ws.readyState === ws.CLOSED) return resolve();
              const timer = setTimeout(() => ws.terminate(), closeGraceMs);
              ws.once('close', () => {
                clearTimeout(timer);
                resolve();
              });
              ws.close(WsCloseCode.GoingAway);
            }),
        ),
      );
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
