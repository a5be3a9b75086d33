import { encodeEd25519Multikey, publicKeyFromDidJwk, publicKeyFromDidKey } from '@wmp/jcs-signing';
import { isLoopbackHost } from '@wmp/jsonrpc-envelope';
import { OHAN_API_PATH, type OhanCard, verifyCard } from '@wmp/ohan-seal';
import { identifierDomain } from '@wmp/session';
import { AnswerCache } from './answer-cache.js';
import { type BoundedFetchOptions, FederationFetchError, fetchJsonObject } from './bounded-fetch.js';
import { relayOriginOf, routeMatches, type StaticRoute } from './federation-config.js';
import type { HomeAnswer, HomeFinding, HomeResolver } from './home-resolver.js';

export interface Fetching extends Omit<BoundedFetchOptions, 'body'> {
  /** Whether an origin may be reached (the guarded fetcher's rule): an answer naming another is ignored. */
  readonly permits: (origin: string) => boolean;
}

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

/**
 * The well-known document's URL of a host: https, or plain http when the host is a loopback one
 * and that http origin may be reached (configured by the operator, or private peers allowed).
 */
export function wellKnownUrlOf(host: string, permits: (origin: string) => boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(`https://${host}`);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '' || url.pathname !== '/') return undefined;
  const plain = isLoopbackHost(url.hostname) && permits(`http://${url.host}`);
  return `${plain ? 'http' : 'https'}://${url.host}/.well-known/wmp-configuration`;
}

/** A relay an answer names, as an origin, when it may be reached; else undefined. */
function permittedOrigin(named: unknown, permits: (origin: string) => boolean): string | undefined {
  const origin = typeof named === 'string' ? relayOriginOf(named) : undefined;
  return origin !== undefined && permits(origin) ? origin : undefined;
}

/** The relay a well-known document names: `relay`, else `endpoints.websocket` (an origin that may be reached). */
export function relayOfDocument(
  doc: Record<string, unknown>,
  permits: (origin: string) => boolean,
): string | undefined {
  const endpoints = doc.endpoints as Record<string, unknown> | undefined;
  const named = typeof doc.relay === 'string' ? doc.relay : endpoints?.websocket;
  return permittedOrigin(named, permits);
}

/** Most well-known answers (one per URL) kept. */
const MAX_DOCUMENTS = 10_000;

/**
 * (2) The domain's `/.well-known/wmp-configuration`. One fetch per URL per TTL, whatever the
 * identifiers under it (a failure is remembered as long as an unresolvable answer).
 */
export function domainResolver(
  fetching: Fetching,
  ttl: { readonly ttlMs: number; readonly unresolvedTtlMs: number; readonly now: () => number },
): HomeResolver {
  type Answer = { readonly relay: string | undefined } | { readonly failed: true };
  const documents = new AnswerCache<Answer>(
    MAX_DOCUMENTS,
    (a) => ('failed' in a ? ttl.unresolvedTtlMs : ttl.ttlMs),
    ttl.now,
  );
  return {
    name: 'well-known',
    async resolve(identifier) {
      const host = domainOf(identifier);
      const url = host === undefined ? undefined : wellKnownUrlOf(host, fetching.permits);
      if (url === undefined) return undefined;
      const answer = await documents.get(url, () =>
        fetchJsonObject(url, fetching).then(
          (doc): Answer => ({ relay: relayOfDocument(doc, fetching.permits) }),
          (): Answer => ({ failed: true }),
        ),
      );
      if ('failed' in answer) throw new FederationFetchError('unreachable');
      return answer.relay;
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

/**
 * Where a card says its owner is at home: every relay it lists that may be reached (ours too);
 * here when it lists us, else the first of the others. Undefined when it lists none of those.
 */
export function homeOfCard(
  card: OhanCard,
  ours: string,
  permits: (origin: string) => boolean,
): HomeFinding | undefined {
  const relays = card.relays.filter((r) => r === ours || permittedOrigin(r, permits) === r);
  if (relays.includes(ours)) return { home: 'here', relays };
  const first = relays[0];
  return first === undefined ? undefined : { home: first, relays };
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
    async resolve(identifier): Promise<HomeAnswer> {
      const key = cardKeyOf(identifier);
      if (key === undefined) return undefined;
      const local = await sources.local?.(key);
      if (local !== undefined) return homeOfCard(local, sources.ours(), fetching.permits);
      let unreachable = false;
      for (const peer of sources.peers()) {
        let card: unknown;
        try {
          card = await fetchJsonObject(`${peer}${OHAN_API_PATH}/cards/lookup`, { ...fetching, body: { key } });
        } catch (e) {
          // A 404 is an answer (no card there); a peer that did not answer leaves the question open.
          if (!(e instanceof FederationFetchError && e.code === 'status')) unreachable = true;
          continue;
        }
        const verdict = verifyCard(card);
        if (verdict.ok && verdict.card.key === key) return homeOfCard(verdict.card, sources.ours(), fetching.permits);
      }
      if (unreachable) throw new FederationFetchError('unreachable');
      return undefined;
    },
  };
}
