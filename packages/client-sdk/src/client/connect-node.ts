// Node only (imported by `@wmp/client-sdk/node`, never by the browser entry): Node 20 has no
// global WebSocket, so this passes `ws`'s, and a fetch over node:http(s) that takes the `tls`
// options (and, unlike Node 20's global fetch, fails at once on a connection closed unanswered).
import { nodeFetch } from '../tls/node-fetch.js';
import { nodeWebSocket } from '../tls/node-websocket.js';
import { hasTlsOptions } from '../tls/options.js';
import { WmpClient } from './client.js';
import { WmpClientError } from './errors.js';
import type { WmpClientOptions } from './types.js';

/**
 * `WmpClient.connect` with `ws` as the WebSocket and `nodeFetch` as the fetch (unless given),
 * both with `tls` applied. `tls` with a `fetch` or `WebSocket` of your own is refused
 * (`ERR_CLIENT_TLS_OPTIONS`): those are yours to configure.
 */
export async function connect(url: string | URL, options: WmpClientOptions): Promise<WmpClient> {
  const { tls, ...rest } = options;
  if (hasTlsOptions(tls) && (rest.fetch !== undefined || rest.WebSocket !== undefined)) {
    throw new WmpClientError('ERR_CLIENT_TLS_OPTIONS');
  }
  return WmpClient.connect(url, { WebSocket: nodeWebSocket(tls), fetch: nodeFetch(tls), ...rest });
}
