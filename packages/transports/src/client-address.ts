/** Most `X-Forwarded-For` characters read: a longer header is a client's, not a proxy chain's. */
const MAX_FORWARDED_CHARS = 1024;

/** An IP address as it may appear in `X-Forwarded-For` (a rate-limit key only: shape, not routing). */
const ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;

/** `::ffff:10.0.0.2` (how Node reports an IPv4 peer on a dual-stack socket) as `10.0.0.2`. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The address a request came from, behind reverse proxies the operator trusts (a load balancer in
 * front of a cluster): the socket's peer, unless it is a trusted proxy; then, walking
 * `X-Forwarded-For` from the right (the entries each proxy appended), the first address that is
 * not a trusted proxy. Entries a client wrote itself are further left and are never reached past
 * an untrusted one. A malformed entry or an oversized header stops the walk at the proxy that
 * forwarded it, so the worst a client gets is to be limited as that proxy.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedProxies: ReadonlySet<string>,
): string | undefined {
  if (socketAddress === undefined || trustedProxies.size === 0) return socketAddress;
  let current = plainAddress(socketAddress);
  if (forwardedFor === undefined || forwardedFor.length > MAX_FORWARDED_CHARS) return current;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0 && trustedProxies.has(current); i--) {
    const hop = hops[i]!.trim();
    if (!ADDRESS.test(hop)) return current;
    current = plainAddress(hop);
  }
  return current;
}

/** `--trusted-proxies` as the set `clientAddress` takes (addresses in plain form). */
export function trustedProxySet(addresses: readonly string[] | undefined): ReadonlySet<string> {
  return new Set((addresses ?? []).map((a) => plainAddress(a.trim())));
}
