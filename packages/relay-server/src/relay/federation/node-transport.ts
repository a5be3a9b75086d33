import { HttpClientTransport, WebSocketClientTransport } from '@wmp/transports/node';
import { WebSocket } from 'ws';
import type { FederationConfig, PeerTransportFactory } from './federation-config.js';

/** A peer relay over WebSocket, else (no WebSocket endpoint published) HTTP + SSE (Node). */
export const nodePeerTransport: PeerTransportFactory = (endpoints) => {
  if (endpoints.websocket !== undefined) return new WebSocketClientTransport({ url: endpoints.websocket, WebSocket });
  if (endpoints.https !== undefined) return new HttpClientTransport({ endpoint: endpoints.https, events: true });
  throw new RangeError('the peer publishes no WMP endpoint');
};

/** The federation config with the Node peer transport, unless one is given. */
export function withNodePeerTransport(config: FederationConfig | undefined): FederationConfig | undefined {
  if (config === undefined || config.transport !== undefined) return config;
  return { ...config, transport: nodePeerTransport };
}
