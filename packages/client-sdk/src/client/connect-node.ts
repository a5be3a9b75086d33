// Node only (imported by `@wmp/client-sdk/node`, never by the browser entry): Node 20 has no
// global WebSocket, so this passes `ws`'s.
import type { WebSocketConstructorLike } from '@wmp/transports';
import { WebSocket } from 'ws';
import { WmpClient } from './client.js';
import type { WmpClientOptions } from './types.js';

/** `WmpClient.connect` with `ws` as the WebSocket implementation (unless one is given). */
export function connect(url: string | URL, options: WmpClientOptions): Promise<WmpClient> {
  return WmpClient.connect(url, { WebSocket: WebSocket as unknown as WebSocketConstructorLike, ...options });
}
