// The relay's `wmp.resolve` (core §5.8): the built-in resolvers of @wmp/session, with `endpoint`
// answered from the relay's own well-known document for identities registered here.
import { builtInResolvers, type DocumentFetch, type Resolver } from '@wmp/session';

export interface RelayResolverDeps {
  /** Whether an identity is registered here (at home on this relay). */
  readonly registered: (identity: string) => boolean;
  /** The relay's well-known document, as served. */
  readonly document: () => Record<string, unknown>;
  readonly now: () => number;
}

export function relayResolvers(
  options: { readonly fetch?: DocumentFetch; readonly httpOrigins?: readonly string[] },
  deps: RelayResolverDeps,
): Record<string, Resolver> {
  return builtInResolvers({
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.httpOrigins ? { httpOrigins: options.httpOrigins } : {}),
    localEndpoint: (identity) => (deps.registered(identity) ? deps.document() : undefined),
    now: deps.now,
  });
}
