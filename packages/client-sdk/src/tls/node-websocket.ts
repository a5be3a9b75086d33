// Node only: `ws` with the TLS options on every connection it opens.
import type { WebSocketConstructorLike } from '@wmp/transports';
import { WebSocket } from 'ws';
import { nodeTlsConnectOptions } from './node-fetch.js';
import { hasTlsOptions, type TlsOptions } from './options.js';

/** `ws`'s WebSocket, or a subclass that adds the CA and client certificate of `tls` to each connection. */
export function nodeWebSocket(tls: TlsOptions = {}): WebSocketConstructorLike {
  if (!hasTlsOptions(tls)) return WebSocket as unknown as WebSocketConstructorLike;
  const extra = nodeTlsConnectOptions(tls);
  return class TlsWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[], options?: WebSocket.ClientOptions) {
      super(url, protocols, { ...options, ...extra });
    }
  } as unknown as WebSocketConstructorLike;
}
