import { type Keypair, signOwnEntry } from '@wmp/jcs-signing';
import { EvidenceRequiredError, RateLimitedError, rfc3339 } from '@wmp/jsonrpc-envelope';
import type { OhanCard } from '@wmp/ohan-seal';
import { TokenBuckets } from '../../coordination/memory/token-buckets.js';
import type { AppendResult, PartitionedQueueCaps, QueueStore } from '../../storage/contracts/queue-store.js';
import { RelayQueueFullError } from '../../storage/errors.js';
import type { EvidenceWitness } from '../evidence/evidence-witness.js';
import type { PeerEvidence } from '../evidence/peer-evidence.js';
import type { Presence } from '../presence/presence.js';
import { outboxEntryId } from '../routing/outbox-entry.js';
import type { OutboxEntry, RemoteHomes } from '../routing/remote-homes.js';
import type { RoutedMessage } from '../routing/routed-message.js';
import type { StatusNotifier } from '../statuses/statuses.js';
import type { Logger } from '../support/logger.js';
import { copyMembers } from '../support/members.js';
import type { OpsLog } from '../support/ops-events.js';
import type { RelayEvents } from '../support/relay-events.js';
import { type StatusParams, statusDetailOf } from '../support/status-params.js';
import { cardResolver, domainResolver, staticRouteResolver } from './builtin-resolvers.js';
import { erdsRefusal, erdsUnsupported, hasErdsRequests } from './erds.js';
import {
  DEFAULT_FEDERATION_TIMINGS,
  type FederationConfig,
  type FederationMode,
  type FederationTimings,
  relayOriginOf,
  routeMatches,
} from './federation-config.js';
import { FederationMetrics } from './federation-metrics.js';
import { type HomeResolver, type Resolution, ResolutionCache, resolveHome } from './home-resolver.js';
import { OutboxPump } from './outbox-pump.js';
import { OutboxWatch } from './outbox-watch.js';
import { PeerLink } from './peer-link.js';
import { PeerStatuses } from './peer-statuses.js';
import { ResolutionBudget } from './resolution-budget.js';

export interface FederationDeps {
  readonly config: FederationConfig;
  readonly identity: Keypair;
  /** This relay's public origin (known once it listens). */
  readonly origin: () => string;
  readonly queue: QueueStore;
  /** The caps of each peer's outbox as a whole (`maxOutbox*` limits). */
  readonly outbox: PartitionedQueueCaps;
  /** Statuses of outbox entries a peer refused go to their senders. */
  readonly statuses: Pick<StatusNotifier, 'send'>;
  readonly presence: Pick<Presence, 'isOnline'>;
  /** Our own OHAN directory, if the relay has one. */
  readonly card?: (key: string) => Promise<OhanCard | undefined>;
  /** The operator's events: peer links up and down. */
  readonly ops: OpsLog;
  readonly logger: Logger;
  readonly now: () => number;
  /**
   * Stores several nodes share: runs `pass` while this node holds the cluster-wide lock `name`
   * (the stores' sweep lock), `ran: false` when another node holds it. Left out: one process.
   */
  readonly lease?: (name: string, pass: () => Promise<void>) => Promise<{ readonly ran: boolean }>;
  /** Records a key once for the whole relay until it expires (the coordination's single-use cache). */
  readonly claim: (key: string, expiresAt: number) => Promise<boolean>;
  /** Whether an identity is live on another node of the cluster (false on one process). */
  readonly onlineElsewhere: (identity: string) => Promise<boolean>;
  /** Frames of routed sessions a peer sends over our link go to the routed sessions. */
  readonly events: Pick<RelayEvents, 'routedOverLink'>;
  /** What happens to messages under evidence at peers (forwarded, refused) is recorded; peers' records come back. */
  readonly evidence: {
    readonly witness: Pick<EvidenceWitness, 'forwarded' | 'dropped'>;
    readonly fromPeers: Pick<PeerEvidence, 'take'>;
  };
}

/** Most peer relays a relay keeps a link and an outbox pump for (docs/federation-profile.md, "Peer sessions"). */
const MAX_PEERS = 1024;
/** The message's own session, which the peer does not get (it has its own, or the routed one). */
const SESSION_ID: ReadonlySet<string> = new Set(['session_id']);

interface PeerState {
  readonly link: PeerLink;
  readonly pump: OutboxPump;
}

/**
 * Relay-to-relay routing (docs/federation-profile.md): resolves where a recipient is at home, keeps
 * an outbox and a link per peer relay, knows which authenticated identities are peer relays, where
 * the statuses of senders reached through a peer go back, and counts it all.
 */
export class Federation implements RemoteHomes {
  readonly mode: FederationMode;
  readonly timings: FederationTimings;
  readonly metrics = new FederationMetrics();
  readonly #deps: FederationDeps;
  readonly #resolvers: readonly HomeResolver[];
  readonly #cache: ResolutionCache;
  readonly #peers = new Map<string, PeerState>();
  /** Origins of configured peers (`--peer`) and of trusted ones (`--peer-trust`). */
  readonly #configured: readonly string[];
  readonly #trusted: ReadonlySet<string>;
  /** Statuses back and forth: return routes, and each status from a peer passed on once. */
  readonly #statuses: PeerStatuses;
  /** Outboxes nobody here sends yet: found in the store at start, and polled on a cluster node. */
  readonly #watch: OutboxWatch;
  #lastPeerRefresh = 0;
  #peerRefresh: Promise<void> | undefined;
  /** What one peer may send: requests and routed bytes per second (its users share them). */
  readonly #peerRequests: TokenBuckets;
  readonly #peerBytes: TokenBuckets;
  /** Lookups that reach other servers: per identity that caused them, and all together. */
  readonly #resolves: ResolutionBudget;

  constructor(deps: FederationDeps) {
    this.#deps = deps;
    const { config } = deps;
    this.mode = config.mode ?? 'peers';
    this.timings = { ...DEFAULT_FEDERATION_TIMINGS, ...config.timings };
    const origins = (urls: readonly string[] | undefined) =>
      (urls ?? []).map((u) => {
        const origin = relayOriginOf(u);
        if (origin === undefined) throw new RangeError('a peer is an https URL (http on loopback only)');
        return origin;
      });
    this.#trusted = new Set(origins(config.trustedPeers));
    this.#configured = [...new Set([...origins(config.peers), ...this.#trusted])];
    const fetching = this.#fetching();
    const t = this.timings;
    this.#resolvers = [
      staticRouteResolver(config.routes ?? []),
      ...(config.resolvers ?? []),
      domainResolver(fetching, { ttlMs: t.resolveTtlMs, unresolvedTtlMs: t.unresolvedTtlMs, now: deps.now }),
      cardResolver(
        { ...(deps.card ? { local: deps.card } : {}), peers: () => this.#configured, ours: deps.origin },
        fetching,
      ),
    ];
    this.#peerRequests = new TokenBuckets({
      perSecond: t.peerRequestsPerSecond,
      burst: t.peerRequestBurst,
      now: deps.now,
    });
    this.#peerBytes = new TokenBuckets({ perSecond: t.peerBytesPerSecond, burst: t.peerBytesBurst, now: deps.now });
    this.#resolves = new ResolutionBudget(t, deps.now);
    this.#cache = new ResolutionCache(t.resolveTtlMs, t.resolveCacheSize, deps.now, t.unresolvedTtlMs);
    this.#statuses = new PeerStatuses({
      statuses: deps.statuses,
      metrics: this.metrics,
      claim: deps.claim,
      onlineElsewhere: deps.onlineElsewhere,
      homePeerOf: (sender) => this.#homePeerOf(sender),
      logger: deps.logger,
      now: deps.now,
      dedupeMs: t.statusDedupeMs,
      maxReturnRoutes: t.maxReturnRoutes,
    });
    this.#watch = new OutboxWatch({
      queue: deps.queue,
      logger: deps.logger,
      peers: () => this.#peers.values(),
      known: (origin) => this.#peers.has(origin),
      adopt: (origin) => this.#peer(origin).pump.kick(),
      maxPeers: MAX_PEERS,
      cluster: deps.lease === undefined ? undefined : { pollMs: t.outboxPollMs, scanMs: t.outboxScanMs },
    });
  }

  /** How federation fetches: the guarded fetcher, its caps, and which origins it may reach. */
  #fetching() {
    const { fetcher } = this.#deps.config;
    return {
      fetcher,
      timeoutMs: this.timings.fetchTimeoutMs,
      maxBytes: this.timings.maxDocumentBytes,
      permits: (origin: string) => fetcher?.permits(origin) ?? false,
    };
  }

  /** Links to the configured peers come up at start (their statuses and relay_ids come over them). */
  start(): void {
    if (this.mode === 'off') return;
    for (const origin of this.#configured) this.#peer(origin).link.ensure();
    this.#watch.start();
  }

  async stop(): Promise<void> {
    this.#watch.stop();
    for (const { link, pump } of this.#peers.values()) {
      pump.stop();
      await link.stop();
    }
  }

  /**
   * Where `identifier` is at home, cached (`ohan.relay.resolve` shows it). A lookup that may fetch
   * (not cached, not running, no static route) is charged to `asker`, the identity that caused it,
   * and to everyone's budget: -31007 (`resolution budget`) beyond either, nothing fetched.
   */
  resolve(identifier: string, asker?: string): Promise<Resolution> {
    const free =
      this.#cache.peek(identifier) !== undefined || this.#cache.pending(identifier) || this.#routed(identifier);
    if (!free && !this.#resolves.take(asker)) {
      this.metrics.resolveRefused();
      return Promise.reject(new RateLimitedError({ reason: 'resolution budget' }));
    }
    return this.#cache.get(identifier, () => resolveHome(this.#resolvers, identifier, this.#deps.origin()));
  }

  /** Whether a static route answers for `identifier` (no fetch: no budget spent). */
  #routed(identifier: string): boolean {
    return (this.#deps.config.routes ?? []).some((r) => routeMatches(r.pattern, identifier));
  }

  /**
   * The origin of the peer a recipient goes to, or undefined when it is kept here: federation off,
   * connected here, something queued for it here, or resolved home here. A lookup is charged to
   * `sender`.
   */
  async remoteHomeOf(recipient: string, sender?: string): Promise<string | undefined> {
    if (this.mode === 'off' || this.#deps.presence.isOnline(recipient)) return undefined;
    const { home } = await this.resolve(recipient, sender);
    if (home === 'here') return undefined;
    if ((await this.#deps.queue.stats(recipient)).count > 0) return undefined;
    return home;
  }

  /**
   * The ERDS check before anything is stored (core §7.5.1.1): -31005 with `data.unsupported` when
   * the peer's well-known `erds` does not list what the message asks; -31009
   * (`next_relay_without_evidence`) when the message is under evidence and the peer offers none
   * (nothing would witness its delivery). A peer whose document cannot be read now is checked
   * again when the entry is sent.
   */
  async checkErds(origin: string, params: Record<string, unknown>, underEvidence: boolean): Promise<void> {
    if (!hasErdsRequests(params) && !underEvidence) return;
    const link = this.#peer(origin).link;
    const doc = link.document ?? (await link.refreshDocument());
    if (doc === undefined) return;
    if (underEvidence && !doc.evidence) {
      this.metrics.refusedOut(origin, 'evidence');
      throw new EvidenceRequiredError({ reason: 'next_relay_without_evidence' });
    }
    const unsupported = erdsUnsupported(params, doc.erds);
    if (unsupported.length > 0) {
      this.metrics.refusedOut(origin, 'erds');
      throw erdsRefusal(unsupported);
    }
  }

  /**
   * Appends `message` for `recipient` to the outbox of the peer at `origin`, durably, as the
   * request the peer gets: the content and `wmp` untouched but for the session (the peer's own,
   * unless the message belongs to a session routed through the peer), `forward_to` (which of `to`
   * this peer delivers), the expiry, and our relay_chain entry signed (a peer verifies every
   * entry: core §5.7 gives a hop's signature its value here).
   */
  async append(origin: string, recipient: string, message: RoutedMessage, entry: OutboxEntry): Promise<AppendResult> {
    const identity = this.#deps.identity;
    const chain = await signOwnEntry(message, { relayId: identity.did, signer: identity });
    // What `{ ...params, wmp: { ...wmp, ... } }` writes, member by member (decision 0733).
    const wmp = copyMembers<Record<string, unknown>>({}, message.params.wmp, SESSION_ID);
    if (entry.session !== undefined) wmp.session_id = entry.session;
    wmp.relay_chain = chain;
    wmp.forward_to = [recipient];
    wmp.expires_at = rfc3339(entry.expiresAt);
    const params = copyMembers<Record<string, unknown>>({}, message.params);
    params.wmp = wmp;
    const forwarded = { jsonrpc: '2.0', method: message.method, params };
    const pump = this.#peer(origin).pump;
    // The outbox is partitioned by remote recipient (docs/federation-profile.md): each recipient
    // within the limits it would have here, the outbox within its own caps.
    return this.#deps.queue
      .appendToPart(
        pump.key,
        {
          id: outboxEntryId(recipient, entry.id),
          sender: entry.sender,
          body: JSON.stringify(forwarded),
          notify: entry.notify,
          evidence: entry.evidence,
        },
        { expiresAt: entry.expiresAt, part: recipient, caps: this.#deps.outbox },
      )
      .catch((e: unknown) => {
        if (e instanceof RelayQueueFullError) this.metrics.outboxFull(origin, e.reason);
        throw e;
      });
  }

  /**
   * Our link to the peer at `origin` once it is up (a link never tried is connected now, within
   * `timeoutMs`); undefined when it does not come up, or no more peers may be linked.
   */
  async readyLink(origin: string, timeoutMs: number): Promise<PeerLink | undefined> {
    let link: PeerLink;
    try {
      link = this.#peer(origin).link;
    } catch {
      return undefined;
    }
    return (await link.ready(timeoutMs)) ? link : undefined;
  }

  /** Our link to the peer at `origin` when it is up now. */
  upLink(origin: string): PeerLink | undefined {
    const link = this.#peers.get(origin)?.link;
    return link?.up === true ? link : undefined;
  }

  /** Entries were committed to the outbox of `origin`: send them. */
  kick(origin: string): void {
    this.#peers.get(origin)?.pump.kick();
  }

  /**
   * Whether an authenticated identity may send messages with another `wmp.sender` (the session
   * engine leaves the sender check to the deliver hook then, which binds it: inbound.ts).
   */
  forwardsFor(identity: string, method: string): boolean {
    return this.mode !== 'off' && method === 'wmp.message.deliver' && identity.startsWith('did:');
  }

  /**
   * The origin of the peer relay authenticated as `relayId`, or undefined: a configured peer whose
   * well-known names it (read again at most every few seconds when an unknown one asks), or any
   * relay in `open` mode (its origin is then unknown: '').
   */
  async peerOriginOf(relayId: string): Promise<string | undefined> {
    const known = this.#originOfRelayId(relayId);
    if (known !== undefined) return known;
    const now = this.#deps.now();
    // One refresh at a time, and one every few seconds at most: forwards that arrive together
    // wait for the same one (a flood of strangers costs one round of fetches).
    if (this.#peerRefresh === undefined && now - this.#lastPeerRefresh > 5_000) {
      this.#lastPeerRefresh = now;
      this.#peerRefresh = Promise.all(this.#configured.map((o) => this.#peer(o).link.refreshDocument()))
        .then(() => undefined)
        .finally(() => {
          this.#peerRefresh = undefined;
        });
    }
    await this.#peerRefresh;
    return this.#originOfRelayId(relayId) ?? (this.mode === 'open' ? '' : undefined);
  }

  /** A configured peer whose relay_id is known: it gets the peer budgets instead of a client's. */
  isKnownPeer(identity: string | undefined): boolean {
    return identity !== undefined && this.#originOfRelayId(identity) !== undefined;
  }

  /** One request of a known peer; -31007 beyond its budget. */
  chargePeerRequest(relayId: string): void {
    if (!this.#peerRequests.take(relayId)) {
      this.metrics.refusedIn('peer_request_rate');
      throw new RateLimitedError({ reason: 'peer request rate' });
    }
  }

  /** Routed bytes of a peer's forwarded message; -31007 beyond its budget. */
  async chargePeer(relayId: string, bytes: number): Promise<void> {
    if (!this.#peerBytes.take(relayId, bytes)) throw new RateLimitedError({ reason: 'peer routed bytes' });
  }

  #originOfRelayId(relayId: string): string | undefined {
    for (const origin of this.#configured) {
      if (this.#peers.get(origin)?.link.document?.relayId === relayId) return origin;
    }
    return undefined;
  }

  /** Whether `identity` is registered at this relay now: on this node, or on another of its cluster. */
  async registeredHere(identity: string): Promise<boolean> {
    return this.#deps.presence.isOnline(identity) || (await this.#deps.onlineElsewhere(identity));
  }

  /** Whether the operator marked the peer at `origin` trusted (`--peer-trust`). */
  trusts(origin: string): boolean {
    return this.#trusted.has(origin);
  }

  /** `sender`'s messages came through the peer `relayId`: its statuses go back there. */
  learnReturnRoute(sender: string, relayId: string): void {
    this.#statuses.learnReturnRoute(sender, relayId);
  }

  /** A status for a sender reached through a peer goes back to that peer. True when sent so. */
  statusToPeer(sender: string, params: StatusParams): boolean {
    return this.#statuses.toPeer(sender, params);
  }

  /** A status about to be kept for a sender at home at a peer goes there instead. True when sent so. */
  statusToHome(sender: string, params: StatusParams): Promise<boolean> {
    return this.#statuses.toHome(sender, params);
  }

  /** The relay_id of the peer where `sender` is at home, when known (or readable now). */
  async #homePeerOf(sender: string): Promise<string | undefined> {
    if (this.mode === 'off') return undefined;
    const { home } = await this.resolve(sender);
    if (home === 'here') return undefined;
    const link = this.#peer(home).link;
    return (link.document ?? (await link.refreshDocument()))?.relayId;
  }

  /** The peer links that are down (`/health`), by origin. */
  peersDown(): string[] {
    return [...this.#peers.values()].filter((p) => p.link.downSince !== undefined).map((p) => p.link.origin);
  }

  /** Per peer: whether connected, whether this node sends its outbox now, its depth and bytes (`/metrics`). */
  async peerGauges(): Promise<
    Array<{ origin: string; connected: boolean; sending: boolean; count: number; bytes: number }>
  > {
    return Promise.all(
      [...this.#peers.values()].map(async ({ link, pump }) => ({
        origin: link.origin,
        connected: link.up,
        sending: pump.sending,
        ...(await this.#deps.queue.stats(pump.key)),
      })),
    );
  }

  #peer(origin: string): PeerState {
    const known = this.#peers.get(origin);
    if (known !== undefined) return known;
    if (this.#peers.size >= MAX_PEERS) throw new RateLimitedError({ reason: 'too many peer relays' });
    const { deps, timings } = { deps: this.#deps, timings: this.timings };
    const { transport } = deps.config;
    const { lease } = deps;
    if (transport === undefined) throw new RangeError('federation needs a peer transport (createRelay brings one)');
    let pump!: OutboxPump;
    const link = new PeerLink({
      origin,
      identity: deps.identity,
      transport,
      fetching: this.#fetching(),
      reconnectInitialMs: timings.reconnectInitialMs,
      reconnectMaxMs: timings.reconnectMaxMs,
      requestTimeoutMs: timings.forwardTimeoutMs,
      onstatus: (params) => this.#statuses.fromPeer(origin, params),
      onevidence: async (params): Promise<boolean> => {
        const relayId = link.document?.relayId;
        if (relayId === undefined) return false;
        return (await deps.evidence.fromPeers.take(relayId, params)) === 'stored';
      },
      onup: () => {
        deps.ops.event('peer.link_up', { peer_relay: link.relayId });
        pump.kick();
      },
      ondown: () => {
        deps.ops.event('peer.link_down', { peer_relay: link.relayId });
        pump.reset();
      },
      // What the peer sends over our link spends its request budget, as what it sends on its own.
      onrouted: async (message) => {
        if (link.relayId !== undefined) this.chargePeerRequest(link.relayId);
        return deps.events.routedOverLink(origin, message);
      },
    });
    pump = new OutboxPump(origin, {
      queue: deps.queue,
      link,
      logger: deps.logger,
      now: deps.now,
      maxInFlight: timings.maxInFlightPerPeer,
      leaseRetryMs: timings.leaseRetryMs,
      ...(lease ? { lease: (pass: () => Promise<void>) => lease(`outbox:${origin}`, pass) } : {}),
      onforwarded: (forwarded) => {
        this.metrics.forwarded(origin, forwarded.length);
        const underEvidence = forwarded.filter((f) => f.entry.evidence);
        if (underEvidence.length === 0) return;
        deps.evidence.witness.forwarded(
          underEvidence.map((f) => ({ messageId: f.messageId, sender: f.entry.sender, recipient: f.recipient })),
          { origin, relayId: link.document?.relayId },
        );
      },
      onrefused: (r) => {
        this.metrics.refusedOut(origin, String(r.code));
        if (r.entry.evidence) deps.evidence.witness.dropped(r.entry.sender, r.messageId, r.recipient, 'peer_refused');
        // The sender hears why: `peer_refused`, with the peer's code and `data.reason` (sender_homed_here, ...).
        const data = statusDetailOf(r.code, r.data);
        deps.statuses.send(
          r.entry.sender,
          {
            message_id: r.messageId,
            status: 'dropped',
            recipient: r.recipient,
            reason: 'peer_refused',
            ...(data ? { data } : {}),
          },
          r.entry.notify,
        );
      },
      check: (params, entry) => {
        const doc = link.document;
        if (doc === undefined) return undefined;
        if (entry.evidence && !doc.evidence) return -31009;
        if (!hasErdsRequests(params)) return undefined;
        return erdsUnsupported(params, doc.erds).length > 0 ? -31005 : undefined;
      },
    });
    const state = { link, pump };
    this.#peers.set(origin, state);
    return state;
  }
}
