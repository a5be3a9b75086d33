import type { Transport } from '@wmp/session';
import {
  type FetchLike,
  HttpClientTransport,
  type ReconnectPolicy,
  WebSocketClientTransport,
  type WebSocketConstructorLike,
} from '@wmp/transports';
import type { Endpoint } from './endpoint.js';

export interface DialOptions {
  readonly allowInsecure: boolean;
  readonly fetch: FetchLike;
  readonly WebSocket?: WebSocketConstructorLike | undefined;
  /** The client's reconnect policy, if it reconnects. */
  readonly policy: ReconnectPolicy | undefined;
}

/** A new, unstarted transport to `endpoint`: a WebSocket, or HTTP with its event stream. */
export function dialTransport(endpoint: Endpoint, options: DialOptions): Transport {
  if (endpoint.binding === 'websocket') {
    return new WebSocketClientTransport({
      url: endpoint.url,
      allowInsecure: options.allowInsecure,
      ...(options.WebSocket ? { WebSocket: options.WebSocket } : {}),
    });
  }
  return new HttpClientTransport({
    endpoint: endpoint.url,
    ...(endpoint.eventsUrl ? { eventsUrl: endpoint.eventsUrl } : {}),
    fetch: options.fetch,
    allowInsecure: options.allowInsecure,
    events: true,
    // The client's own policy: one backoff, whether the stream or the connection drops.
    ...(options.policy ? { reconnect: options.policy } : {}),
  });
}
