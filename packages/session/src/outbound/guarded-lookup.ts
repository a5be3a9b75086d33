import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { OutboundFetchError } from './outbound-errors.js';
import { addressAllowed, literalAddressOf, type OutboundRules } from './outbound-rules.js';

export type ResolveAll = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export const systemResolveAll: ResolveAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * What a socket to a guarded URL is opened with: a `lookup` that resolves the host, refuses it
 * unless every address is allowed, and hands the socket only the checked addresses, so the
 * address connected is one that was checked (no second DNS answer, no rebinding). A host that is
 * an IP literal is never looked up by Node, so it is checked here, before anything connects.
 * Throws `OutboundFetchError('address_refused')` for a refused literal.
 */
export function guardedSocketOptions(
  url: URL,
  rules: OutboundRules,
  resolveAll: ResolveAll,
): { readonly lookup: LookupFunction } {
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  const literal = literalAddressOf(url.hostname);
  if (literal !== undefined && !addressAllowed(literal, secure, rules)) throw new OutboundFetchError('address_refused');
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolveAll(hostname).then(
      (answers) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
        const usable = answers.filter((a) => family === 0 || a.family === family);
        if (usable.length === 0) return callback(new OutboundFetchError('unreachable') as NodeJS.ErrnoException, '', 0);
        if (!usable.every((a) => addressAllowed(a.address, secure, rules))) {
          return callback(new OutboundFetchError('address_refused') as NodeJS.ErrnoException, '', 0);
        }
        if (options.all)
          callback(
            null,
            usable.map((a) => ({ address: a.address, family: a.family })),
          );
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      () => callback(new OutboundFetchError('unreachable') as NodeJS.ErrnoException, '', 0),
    );
  };
  return { lookup };
}
