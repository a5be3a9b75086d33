import type { Context } from 'hono';
import { clientAddress } from '../client-address.js';

/** @hono/node-server puts Node's request in `env.incoming`: its socket's address, if so. */
export function nodeServerAddress(c: Context): string | undefined {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress;
}

/**
 * The client address of a request a hono app serves: the socket's peer (`socketAddress`, default
 * @hono/node-server's), or behind the reverse proxies in `trustedProxies` what their
 * `X-Forwarded-For` names (`clientAddress`). A key for per-source limits only, never logged.
 */
export function requestAddress(
  c: Context,
  trustedProxies: ReadonlySet<string>,
  socketAddress: (c: Context) => string | undefined = nodeServerAddress,
): string | undefined {
  return clientAddress(socketAddress(c), c.req.header('x-forwarded-for'), trustedProxies);
}
