import { createGuardedFetcher, type GuardedFetcher } from '@wmp/session/node';
import { HttpClientTransport, WebSocketClientTransport, type WebSocketConstructorLike } from '@wmp/transports/node';
import { WebSocket } from 'ws';
import { configuredOrigins, type FederationConfig, type PeerTransportFactory } from './federation-config.js';

/**
 * `ws`'s WebSocket, connecting through the guarded fetcher's socket options: a peer's endpoint
 * that is not one the operator configured is reached only at a checked address (no loopback,
 * private, link-local or unique-local one unless private peers are allowed, after DNS).
 */
function guardedWebSocket(fetcher: GuardedFetcher): WebSocketConstructorLike {
  return class extends WebSocket {
    constructor(url: string, protocols?: string | string[], options?: Record<string, unknown>) {
      super(url, protocols, { ...options, ...fetcher.socketOptions(url) });
    }
  };
}

/**
 * A peer relay over WebSocket, else (no WebSocket endpoint published) HTTP + SSE (Node), both
 * through `fetcher`.
 */
export function nodePeerTransport(fetcher: GuardedFetcher): PeerTransportFactory {
  const WebSocketCtor = guardedWebSocket(fetcher);
  return (endpoints) => {
    if (endpoints.websocket !== undefined) {
      return new WebSocketClientTransport({ url: endpoints.websocket, WebSocket: WebSocketCtor });
    }
    if (endpoints.https !== undefined) {
      return new HttpClientTransport({ endpoint: endpoints.https, events: true, fetch: fetcher.fetch });
    }
    throw new RangeError('the peer publishes no WMP endpoint');
  };
}

/**
 * The federation config with what the Node relay brings, unless given: the guarded fetcher
 * (`allowPrivatePeers`, the configured origins reached as given) and the peer transport on it.
 */
export function withNodeFederation(config: FederationConfig | undefined): FederationConfig | undefined {
  if (config === undefined) return undefined;
  const configured = configuredOrigins(config);
  const fetcher =
    config.fetcher ??
    createGuardedFetcher({ allowPrivate: config.allowPrivatePeers ?? false, trusted: (o) => configured.has(o) });
  return { ...config, fetcher, transport: config.transport ?? nodePeerTransport(fetcher) };
}
