import { isLoopbackHost } from '@wmp/jsonrpc-envelope';
import { HttpTransportError } from './http-errors.js';

/** The endpoint to use: `https:`, or `http:` only with `allowInsecure` or to a loopback host (transport §2.1). */
export function toHttpUrl(url: string | URL, allowInsecure = false): URL {
  const u = new URL(url);
  if (u.protocol === 'https:') return u;
  if (u.protocol === 'http:' && (allowInsecure || isLoopbackHost(u.hostname))) return u;
  throw new HttpTransportError('ERR_HTTP_INSECURE_URL');
}
