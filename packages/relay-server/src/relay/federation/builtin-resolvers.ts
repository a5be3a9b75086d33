import { encodeEd25519Multikey, publicKeyFromDidJwk, publicKeyFromDidKey } from '@wmp/jcs-signing';
import { type OhanCard, verifyCard } from '@wmp/ohan-seal';
import { identifierDomain } from '@wmp/session';
import { type BoundedFetchOptions, FederationFetchError, fetchJsonObject } from './bounded-fetch.js';
import { isLoopbackHost, relayOriginOf, routeMatches, type StaticRoute } from './federation-config.js';
import type { HomeAnswer, HomeResolver } from './home-resolver.js';

type Fetching = Omit<BoundedFetchOptions, 'body'>;

/** (1) The operator's routes, in order: an exact identifier or a `prefix*`. */
export function staticRouteResolver(routes: readonly StaticRoute[]): HomeResolver {
  const compiled = routes.map((r) => ({ pattern: r.pattern, origin: relayOriginOf(r.url) }));
  return {
    name: 'route',
    resolve(identifier) {
      return compiled.find((r) => routeMatches(r.pattern, identifier))?.origin;
    },
  };
}

/** The host of an identifier with a domain (wmp-tables §5.4): one copy, in @wmp/session. */
export const domainOf = identifierDomain;

/** The well-known document's URL of a host: https, or http on loopback (tests). */
export function wellKnownUrlOf(host: string): string | undefined {
  let url: URL;
  try {
    url = new URL(`https://${host}`);
  } catch {
    return undefined;
  }
  const scheme = isLoopbackHost(url.hostname) ? 'http' : 'https';
  return `${scheme}://${url.host}/.well-known/wmp-configuration`;
}

/** The relay a well-known document names: `relay`, else `endpoints.websocket`. */
export function relayOfDocument(doc: Record<string, unknown>): string | undefined {
  const endpoints = doc.endpoints as Record<string, unknown> | undefined;
  const named = typeof doc.relay === 'string' ? doc.relay : endpoints?.websocket;
  return typeof named === 'string' ? relayOriginOf(named) : undefined;
}

/** (2) The domain's `/.well-known/wmp-configuration`. */
export function domainResolver(fetching: Fetching): HomeResolver {
  return {
    name: 'well-known',
    async resolve(identifier) {
      const host = domainOf(identifier);
      const url = host === undefined ? undefined : wellKnownUrlOf(host);
      if (url === undefined) return undefined;
      return relayOfDocument(await fetchJsonObject(url, fetching));
    },
  };
}

/** The Ed25519 multikey of a `did:key` or `did:jwk`, or undefined. */
export function cardKeyOf(identifier: string): string | undefined {
  try {
    if (identifier.startsWith('did:key:')) return encodeEd25519Multikey(publicKeyFromDidKey(identifier));
    if (identifier.startsWith('did:jwk:')) return encodeEd25519Multikey(publicKeyFromDidJwk(identifier));
  } catch {
    return undefined;
  }
  return undefined;
}

/** Where a card says its owner is at home: here when it lists us, else its first relay. */
export function homeOfCard(card: OhanCard, ours: string): HomeAnswer {
  if (card.relays.includes(ours)) return 'here';
  return card.relays[0];
}

export interface CardSources {
  /** Our own directory (the box), if it has one. */
  readonly local?: (key: string) => Promise<OhanCard | undefined>;
  /** The origins of the peers whose directories are asked next. */
  readonly peers: () => readonly string[];
  readonly ours: () => string;
}

/**
 * (3) For `did:key` / `did:jwk`: the recipient's signed card, in our directory, else in the
 * directory of each peer (`POST /ohan/v1/cards/lookup`); a card is believed only with a valid
 * signature by the very key asked for.
 */
export function cardResolver(sources: CardSources, fetching: Fetching): HomeResolver {
  return {
    name: 'card',
    async resolve(identifier) {
      const key = cardKeyOf(identifier);
      if (key === undefined) return undefined;
      const local = await sources.local?.(key);
      if (local !== undefined) return homeOfCard(local, sources.ours());
      let unreachable = false;
      for (const peer of sources.peers()) {
        let card: unknown;
        try {
          card = await fetchJsonObject(`${peer}/ohan/v1/cards/lookup`, { ...fetching, body: { key } });
        } catch (e) {
          // A 404 is an answer (no card there); a peer that did not answer leaves the question open.
          if (!(e instanceof FederationFetchError && e.code === 'status')) unreachable = true;
          continue;
        }
        const verdict = verifyCard(card);
        if (verdict.ok && verdict.card.key === key) return homeOfCard(verdict.card, sources.ours());
      }
      if (unreachable) throw new FederationFetchError('unreachable');
      return undefined;
    },
  };
}
