import { isLoopbackHost } from '@wmp/jsonrpc-envelope';
import type { Transport } from '@wmp/session';
import type { GuardedFetcher } from '@wmp/session/node';
import type { HomeResolver } from './home-resolver.js';

/**
 * Who the relay federates with (docs/federation-profile.md, "Modes"): `off` routes nothing out and
 * takes nothing in; `peers` (the binary's default) forwards to any resolved home relay and takes
 * forwarded messages only from configured peers; `open` also takes them from relays nobody
 * configured.
 */
export type FederationMode = 'off' | 'peers' | 'open';

/** A static route: an exact identifier, or a prefix ending in `*`, to a relay URL. */
export interface StaticRoute {
  readonly pattern: string;
  readonly url: string;
}

/** The ERDS object this relay publishes in its well-known document (core §3.5, §7.5.1.1). */
export interface ErdsSettings {
  readonly consignment_modes?: readonly string[];
  readonly assurance_levels?: readonly string[];
  readonly supported_policies?: readonly string[];
  /** Other members of the object (delegation, evidence_repository, ...), published as given. */
  readonly [member: string]: unknown;
}

/** Bounds and timings of federation; each has a default (`DEFAULT_FEDERATION_TIMINGS`). */
export interface FederationTimings {
  /** How long a resolved home (or a well-known document) is cached. */
  readonly resolveTtlMs: number;
  /**
   * How long an answer reached past a failure (a server that did not answer, an address that is
   * not fetched) is cached: a target nobody can resolve is not asked again for each message.
   */
  readonly unresolvedTtlMs: number;
  /**
   * Lookups that are not cached one identity may cause (`ohan.relay.resolve`, messages to
   * recipients not known yet), per second and as a burst; beyond, -31007.
   */
  readonly resolvesPerSecond: number;
  readonly resolveBurst: number;
  /** The same for everyone together (a fresh identity per lookup gains nothing past this). */
  readonly resolvesPerSecondTotal: number;
  readonly resolveBurstTotal: number;
  /** Most cached resolutions (oldest go first). */
  readonly resolveCacheSize: number;
  /** A fetch of a well-known document or a card must answer within this long. */
  readonly fetchTimeoutMs: number;
  /** Largest well-known document or card read. */
  readonly maxDocumentBytes: number;
  /** A forward to a peer must be answered within this long, else it is retried. */
  readonly forwardTimeoutMs: number;
  /** Reconnection to a peer: first delay ceiling and largest one (full jitter). */
  readonly reconnectInitialMs: number;
  readonly reconnectMaxMs: number;
  /** Most forwards to one peer awaiting its answer at once. */
  readonly maxInFlightPerPeer: number;
  /** Senders remembered as reached through a peer (where their statuses go back). */
  readonly maxReturnRoutes: number;
  /** Requests per second of one configured peer (all its users together), and the burst. */
  readonly peerRequestsPerSecond: number;
  readonly peerRequestBurst: number;
  /** Routed bytes per second of one peer, and the burst. */
  readonly peerBytesPerSecond: number;
  readonly peerBytesBurst: number;
  /**
   * How long a status a peer sent back is remembered once passed on, so that copies of it (one per
   * link of a cluster's nodes, or replayed after a reconnect) are dropped.
   */
  readonly statusDedupeMs: number;
  /** A cluster node reads every peer's outbox this often, in case the node sending it died. */
  readonly outboxPollMs: number;
  /**
   * A cluster node looks this often for outboxes of peers it never heard of that hold something
   * (another node appended to them, then died); every relay looks once at start.
   */
  readonly outboxScanMs: number;
  /** A cluster node that found a peer's outbox leased to another node tries again after about this long. */
  readonly leaseRetryMs: number;
}

export const DEFAULT_FEDERATION_TIMINGS: FederationTimings = Object.freeze({
  resolveTtlMs: 5 * 60_000,
  unresolvedTtlMs: 60_000,
  resolvesPerSecond: 2,
  resolveBurst: 100,
  resolvesPerSecondTotal: 20,
  resolveBurstTotal: 200,
  resolveCacheSize: 10_000,
  fetchTimeoutMs: 5_000,
  maxDocumentBytes: 64 * 1024,
  forwardTimeoutMs: 30_000,
  reconnectInitialMs: 500,
  reconnectMaxMs: 30_000,
  maxInFlightPerPeer: 256,
  maxReturnRoutes: 100_000,
  peerRequestsPerSecond: 5_000,
  peerRequestBurst: 10_000,
  peerBytesPerSecond: 16 * 1024 * 1024,
  peerBytesBurst: 64 * 1024 * 1024,
  statusDedupeMs: 2 * 60_000,
  outboxPollMs: 5_000,
  outboxScanMs: 60_000,
  leaseRetryMs: 2_000,
});

/** Opens a client transport to a peer relay's WMP endpoint (WebSocket, else HTTP + SSE). */
export type PeerTransportFactory = (endpoints: PeerEndpoints) => Transport;

export interface PeerEndpoints {
  readonly websocket?: string;
  readonly https?: string;
}

export interface FederationConfig {
  readonly mode?: FederationMode;
  /** `--route`: tried first, in order. */
  readonly routes?: readonly StaticRoute[];
  /** `--peer`: relays whose forwarded messages this relay takes (their well-known names their relay_id). */
  readonly peers?: readonly string[];
  /** `--peer-trust`: peers that may speak for any sender not homed here. */
  readonly trustedPeers?: readonly string[];
  /** Published as `erds` in the well-known document. */
  readonly erds?: ErdsSettings;
  /** Resolvers a profile adds (core §7.5.3), tried after static routes and before the built-in ones. */
  readonly resolvers?: readonly HomeResolver[];
  /**
   * Reach peers, well-known documents and cards at private, loopback, link-local and unique-local
   * addresses, and plain http on loopback (`--allow-private-peers`: closed deployments and tests).
   * What the operator configured (`peers`, `trustedPeers`, `routes`) is reached as given anyway.
   */
  readonly allowPrivatePeers?: boolean;
  /** How to reach a peer; the Node relay (`createRelay`) brings WebSocket and HTTP + SSE clients. */
  readonly transport?: PeerTransportFactory;
  /**
   * Every fetch made on a client's behalf (well-known documents, cards, peer documents); the Node
   * relay (`createRelay`) brings the guarded fetcher of `@wmp/session/node` for this config.
   */
  readonly fetcher?: GuardedFetcher;
  readonly timings?: Partial<FederationTimings>;
}

/** Parses `<identifier or prefix*>=<relay URL>` (`--route`, `WMP_ROUTES`); throws RangeError. */
export function parseRoute(text: string): StaticRoute {
  const at = text.lastIndexOf('=');
  const pattern = text.slice(0, at);
  const url = text.slice(at + 1);
  if (at <= 0 || pattern.length === 0 || !relayOriginOf(url)) {
    throw new RangeError('a route is <identifier or prefix*>=<relay URL>');
  }
  return { pattern, url };
}

/** Whether `identifier` matches a route pattern (exact, or a prefix ending in `*`). */
export function routeMatches(pattern: string, identifier: string): boolean {
  return pattern.endsWith('*') ? identifier.startsWith(pattern.slice(0, -1)) : pattern === identifier;
}

/**
 * The origin a relay URL names (`https://relay.example/wmp` -> `https://relay.example`), with
 * `ws(s)` read as `http(s)`; undefined for anything but https, or http on loopback.
 */
export function relayOriginOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url.replace(/^ws/, 'http'));
  } catch {
    return undefined;
  }
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  if (parsed.protocol === 'https:') return parsed.origin;
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return parsed.origin;
  return undefined;
}

/** The origins the operator configured (`peers`, `trustedPeers`, `routes`): reached as given. */
export function configuredOrigins(config: FederationConfig): ReadonlySet<string> {
  const urls = [...(config.peers ?? []), ...(config.trustedPeers ?? []), ...(config.routes ?? []).map((r) => r.url)];
  return new Set(urls.map(relayOriginOf).filter((o): o is string => o !== undefined));
}
