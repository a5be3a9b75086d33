import { isLoopbackHost } from '@wmp/jsonrpc-envelope';
import { WebSocketTransportError } from './ws-errors.js';

/**
 * The URL to dial: `wss:` as given, `https:` mapped to `wss:` (go-wmp accepts both), and `ws:`
 * or `http:` only with `allowInsecure` or to a loopback host (transport §2.1 requires TLS; TLS
 * there protects nothing and local development needs it).
 */
export function toWebSocketUrl(url: string | URL, allowInsecure = false): string {
  const u = new URL(url);
  if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol === 'http:') u.protocol = 'ws:';
  if (u.protocol === 'wss:') return u.toString();
  if (u.protocol === 'ws:' && (allowInsecure || isLoopbackHost(u.hostname))) return u.toString();
  throw new WebSocketTransportError('ERR_WS_INSECURE_URL');
}
