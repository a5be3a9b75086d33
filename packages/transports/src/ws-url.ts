import { WebSocketTransportError } from './ws-errors.js';

/**
 * True for hosts that never leave the machine: `localhost` (and `*.localhost`, RFC 6761),
 * 127.0.0.0/8 and `[::1]`. Plain `ws:`/`http:` is allowed to those without `allowInsecure`,
 * because TLS there protects nothing and local development needs it.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '[::1]' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The URL to dial: `wss:` as given, `https:` mapped to `wss:` (go-wmp accepts both), and `ws:`
 * or `http:` only with `allowInsecure` or to a loopback host (transport §2.1 requires TLS).
 */
export function toWebSocketUrl(url: string | URL, allowInsecure = false): string {
  const u = new URL(url);
  if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol === 'http:') u.protocol = 'ws:';
  if (u.protocol === 'wss:') return u.toString();
  if (u.protocol === 'ws:' && (allowInsecure || isLoopbackHost(u.hostname))) return u.toString();
  throw new WebSocketTransportError('ERR_WS_INSECURE_URL');
}
