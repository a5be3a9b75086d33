import type { Keypair } from '@wmp/jcs-signing';
import {
  EVIDENCE_EVENT_TYPES,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  MIN_MESSAGE_BYTES,
  toWmpError,
} from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError, type ForwardedAnswer, Peer, WmpSession } from '@wmp/session';
import { ReconnectPolicy } from '@wmp/transports';
import { type BoundedFetchOptions, fetchJsonObject } from './bounded-fetch.js';
import { type PeerEndpoints, type PeerTransportFactory, relayOriginOf } from './federation-config.js';
import { forwardBatches } from './forward-batches.js';
import { StatusAcks } from './status-acks.js';

/** What a peer relay's well-known document says about it. */
export interface PeerDocument {
  readonly relayId: string;
  readonly endpoints: PeerEndpoints;
  /** Its `erds` object (core §7.5.1.1), when it publishes one. */
  readonly erds: Record<string, unknown> | undefined;
  /** It offers the `evidence` capability (its document's `capabilities.evidence`): it records what it witnesses. */
  readonly evidence: boolean;
}

/**
 * Reads the parts of a well-known document a peer link needs; undefined when it names no relay_id.
 * An endpoint whose origin may not be reached (`permits`: the guarded fetcher's rule) is left out.
 */
export function peerDocumentOf(
  doc: Record<string, unknown>,
  permits: (origin: string) => boolean,
): PeerDocument | undefined {
  if (typeof doc.relay_id !== 'string' || !doc.relay_id.startsWith('did:')) return undefined;
  const endpoints = (doc.endpoints ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => {
    const origin = typeof v === 'string' ? relayOriginOf(v) : undefined;
    return origin !== undefined && permits(origin) ? (v as string) : undefined;
  };
  const websocket = text(endpoints.websocket);
  const https = text(endpoints.https) ?? text(doc.relay);
  const erds = doc.erds;
  const capabilities = doc.capabilities;
  const evidence =
    capabilities !== null && typeof capabilities === 'object'
      ? (capabilities as Record<string, unknown>).evidence
      : undefined;
  return {
    relayId: doc.relay_id,
    endpoints: { ...(websocket ? { websocket } : {}), ...(https ? { https } : {}) },
    erds:
      erds !== null && typeof erds === 'object' && !Array.isArray(erds) ? (erds as Record<string, unknown>) : undefined,
    evidence: evidence !== null && typeof evidence === 'object',
  };
}

export interface PeerLinkOptions {
  readonly origin: string;
  /** This relay's key: the link's session is this relay's `relay_id` (did:key). */
  readonly identity: Keypair;
  readonly transport: PeerTransportFactory;
  readonly fetching: Omit<BoundedFetchOptions, 'body'> & { readonly permits: (origin: string) => boolean };
  readonly reconnectInitialMs: number;
  readonly reconnectMaxMs: number;
  readonly requestTimeoutMs: number;
  /** A `wmp.message.status` the peer sent about a message this relay forwarded. */
  readonly onstatus: (params: Record<string, unknown>) => void | Promise<void>;
  /**
   * A `wmp.evidence.notify` the peer sent about a message this relay forwarded; resolves whether
   * it was kept (the peer is told `stored`) or not (`rejected`).
   */
  readonly onevidence: (params: Record<string, unknown>) => Promise<boolean>;
  /** The link is up (again): what waits for it may go. */
  readonly onup: () => void;
  /** The link went down. */
  readonly ondown: () => void;
  /**
   * A frame of a session routed through the peer (it names a session other than the link's own):
   * a request's result, or its error thrown, is the answer the link gives the peer.
   */
  readonly onrouted: (message: JsonRpcRequest | JsonRpcNotification) => Promise<unknown>;
}

/**
 * Capabilities a relay offers a peer: messaging, relaying, offline statuses, that it is a relay,
 * and evidence of every event type (the records of messages it forwarded under evidence come back).
 */
const PEER_CAPABILITIES = {
  messaging: {},
  relay: { peer: true },
  offline: { status_notifications: true },
  evidence: { event_types: [...EVIDENCE_EVENT_TYPES] },
};

/**
 * A relay's own session at another relay (docs/federation-profile.md, "Peer sessions"): WMP over
 * WebSocket (else HTTP + SSE), created as this relay's `relay_id`, authenticated with a signed
 * challenge, the responder proving the `relay_id` its well-known document names, registered so that
 * statuses come back on it. Kept up with exponential backoff and full jitter while anything wants
 * it.
 */
export class PeerLink {
  readonly origin: string;
  readonly #options: PeerLinkOptions;
  readonly #policy: ReconnectPolicy;
  #session: WmpSession | undefined;
  #document: PeerDocument | undefined;
  #connecting: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #renew: ReturnType<typeof setInterval> | undefined;
  #attempt = 0;
  #stopped = false;
  /** When the link last went down (ms), or undefined while up or never tried. */
  downSince: number | undefined;

  constructor(options: PeerLinkOptions) {
    this.origin = options.origin;
    this.#options = options;
    this.#policy = new ReconnectPolicy({
      initialDelayMs: options.reconnectInitialMs,
      maxDelayMs: options.reconnectMaxMs,
      maxAttempts: Number.POSITIVE_INFINITY,
    });
  }

  get up(): boolean {
    return this.#session !== undefined && !this.#session.peer.closed;
  }

  /** The peer's relay_id, once its well-known document was read. */
  get relayId(): string | undefined {
    return this.#document?.relayId;
  }

  /**
   * Whether the link is up, or comes up within `timeoutMs`: a link never tried (or stopped
   * trying) is connected now; one waiting for its next attempt after a failure is not waited for.
   */
  async ready(timeoutMs: number): Promise<boolean> {
    if (this.up) return true;
    if (this.#stopped || this.#timer !== undefined) return false;
    this.ensure();
    const connecting = this.#connecting;
    if (connecting === undefined) return this.up;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([connecting, late]);
    clearTimeout(timer);
    return this.up;
  }

  /** The peer's well-known facts, once read (its relay_id, endpoints, erds). */
  get document(): PeerDocument | undefined {
    return this.#document;
  }

  /** Reads the peer's well-known document (again); undefined when it cannot be read. */
  async refreshDocument(): Promise<PeerDocument | undefined> {
    try {
      const { fetching } = this.#options;
      const doc = peerDocumentOf(
        await fetchJsonObject(`${this.origin}/.well-known/wmp-configuration`, fetching),
        fetching.permits,
      );
      if (doc !== undefined) this.#document = doc;
      return doc;
    } catch {
      return undefined;
    }
  }

  /** Connects now unless up or connecting; failures schedule the next attempt. */
  ensure(): void {
    if (this.#stopped || this.up || this.#connecting !== undefined || this.#timer !== undefined) return;
    this.#connecting = this.#connect().finally(() => {
      this.#connecting = undefined;
    });
  }

  /**
   * Sends forwarded messages as requests in as few frames as the peer takes (JSON-RPC batches of
   * at most `MAX_FORWARD_BATCH` entries and, by the sizes given, within the frame size the peer
   * negotiated): one promise per entry, in order, each resolving with the peer's result for it.
   * The peer answers a batch once all of its entries are on its disk (decision 0710).
   */
  forwardPage(
    entries: readonly { readonly params: Record<string, unknown>; readonly bytes: number }[],
  ): Promise<unknown>[] {
    const session = this.#session;
    if (session === undefined || session.peer.closed)
      return entries.map(() => Promise.reject(new Error('peer link down')));
    const options = { timeoutMs: this.#options.requestTimeoutMs };
    const maxSize = (session.capabilities.messaging as { max_size?: unknown } | undefined)?.max_size;
    const frameBytes = typeof maxSize === 'number' && maxSize > 0 ? maxSize : MIN_MESSAGE_BYTES;
    const answers: Promise<unknown>[] = [];
    for (const batch of forwardBatches(entries, frameBytes)) {
      if (batch.length === 1) {
        answers.push(session.request('wmp.message.deliver', batch[0]!.params, options));
        continue;
      }
      const sent = session.requestBatch(
        'wmp.message.deliver',
        batch.map((e) => e.params),
        options,
      );
      for (let i = 0; i < batch.length; i++) answers.push(sent.then((all) => all[i]!));
    }
    return answers;
  }

  /**
   * Passes a request of a routed session to the peer with an id of the link's own, and resolves
   * with the peer's answer as it came; rejects with `ConnectionClosedError` while the link is down.
   */
  pass(method: string, params: unknown, timeoutMs: number): Promise<ForwardedAnswer> {
    const session = this.#session;
    if (session === undefined || session.peer.closed) return Promise.reject(new ConnectionClosedError());
    return session.peer.forward(method, params as Record<string, unknown> | undefined, { timeoutMs });
  }

  /** Sends a notification of a routed session as it is; false while the link is down. */
  async send(message: JsonRpcNotification): Promise<boolean> {
    const session = this.#session;
    if (session === undefined || session.peer.closed) return false;
    await session.peer.send(message);
    return true;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#renew);
    await this.#connecting?.catch(() => undefined);
    await this.#session?.peer.close().catch(() => undefined);
    this.#session = undefined;
  }

  async #connect(): Promise<void> {
    let peer: Peer | undefined;
    try {
      const doc = (await this.refreshDocument()) ?? this.#document;
      if (doc === undefined) throw new Error('no well-known document');
      const session = await this.#open(doc);
      peer = session.peer as Peer;
      const link = peer;
      link.divert = (message) => this.#routed(link, session.id, message);
      // One at a time, in the order they came: a `queued` is never passed on after its `delivered`.
      let statuses = Promise.resolve();
      const acks = new StatusAcks((ids) => session.notify('wmp.message.ack', { message_ids: ids, status: 'received' }));
      session.on('status', (params) => {
        statuses = statuses.then(() => this.#status(acks, params as Record<string, unknown>));
      });
      session.on('notification', ({ method, params }) => {
        if (method !== 'wmp.evidence.notify') return;
        statuses = statuses.then(() => this.#evidence(session, params));
      });
      const registered = (await session.request('wmp.relay.register', {})) as { ttl?: number };
      if (this.#stopped) {
        await peer.close();
        return;
      }
      this.#session = session;
      this.#attempt = 0;
      this.downSince = undefined;
      // A registration holds for its TTL: renewed at half of it, so statuses keep coming here.
      const ttlMs = Math.max(10, registered.ttl ?? 3600) * 500;
      this.#renew = setInterval(() => void session.request('wmp.relay.register', {}).catch(() => undefined), ttlMs);
      (this.#renew as { unref?: () => void }).unref?.();
      peer.onclose = () => this.#lost(session);
      this.#options.onup();
    } catch {
      await peer?.close().catch(() => undefined);
      this.#retry();
    }
  }

  /**
   * Opens and authenticates a session at the peer: over WebSocket when it publishes one, and over
   * HTTP + SSE when that cannot be opened (a proxy in front of the peer that passes no upgrades,
   * say) and the peer publishes an HTTP endpoint too.
   */
  async #open(doc: PeerDocument): Promise<WmpSession> {
    const { websocket, https } = doc.endpoints;
    const tries: PeerEndpoints[] =
      websocket !== undefined && https !== undefined ? [doc.endpoints, { https }] : [doc.endpoints];
    let failure: unknown;
    for (const endpoints of tries) {
      const peer = new Peer(this.#options.transport(endpoints));
      try {
        await peer.start();
        return await WmpSession.open(peer, {
          signer: this.#options.identity,
          capabilities: PEER_CAPABILITIES,
          verifyResponder: { id: doc.relayId },
          requestOptions: { timeoutMs: this.#options.requestTimeoutMs },
        });
      } catch (e) {
        failure = e;
        await peer.close().catch(() => undefined);
      }
    }
    throw failure;
  }

  /**
   * Hands a status on, then acknowledges one the peer kept for us (it has a message id): else the
   * peer would replay it to every link of ours that registers later, until it expires. The
   * acknowledgements of a turn's statuses go in one frame (`StatusAcks`).
   */
  async #status(acks: StatusAcks, params: Record<string, unknown>): Promise<void> {
    try {
      await this.#options.onstatus(params);
    } catch {
      // Passed on or not, a kept status is acknowledged: the handler logs its own failures.
    }
    const id = (params.wmp as { message_id?: unknown } | undefined)?.message_id;
    if (typeof id === 'string') acks.add(id);
  }

  /**
   * Takes a frame the peer sent on a session other than the link's own (a session routed through
   * both relays): handed to `onrouted`, its answer sent back under the peer's request id. Anything
   * else (the link's own frames, answers to our requests) is the link's.
   */
  #routed(peer: Peer, own: string, message: JsonRpcMessage): boolean {
    if (!('method' in message)) return false;
    const named = (message.params as { wmp?: { session_id?: unknown } } | undefined)?.wmp?.session_id;
    if (typeof named !== 'string' || named === own) return false;
    void this.#options
      .onrouted(message)
      .then(
        (result) =>
          'id' in message
            ? peer.send({ jsonrpc: '2.0', id: message.id, result: result === undefined ? {} : result })
            : undefined,
        (e: unknown) => ('id' in message ? peer.send(toWmpError(e).toResponse(message.id)) : undefined),
      )
      .catch(() => undefined);
    return true;
  }

  /** Hands a peer's evidence on, then acknowledges it (kept or not: else it comes again until it expires). */
  async #evidence(session: WmpSession, params: Record<string, unknown>): Promise<void> {
    let kept = false;
    try {
      kept = await this.#options.onevidence(params);
    } catch {
      // Logged by the handler; a record that cannot be kept is acknowledged as rejected.
    }
    const id = (params.wmp as { message_id?: unknown } | undefined)?.message_id;
    const evidenceId = (params.evidence as { evidence_id?: unknown } | undefined)?.evidence_id;
    const ids = [...new Set([id, evidenceId].filter((x): x is string => typeof x === 'string'))];
    if (ids.length === 0 || !session.capabilities.evidence) return;
    await session
      .notify('wmp.evidence.ack', { evidence_ids: ids, status: kept ? 'stored' : 'rejected' })
      .catch(() => undefined);
  }

  #lost(session: WmpSession): void {
    if (this.#session !== session) return;
    this.#session = undefined;
    clearInterval(this.#renew);
    this.#options.ondown();
    this.#retry();
  }

  #retry(): void {
    this.downSince ??= Date.now();
    if (this.#stopped) return;
    this.#attempt++;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.ensure();
    }, this.#policy.nextDelay(this.#attempt));
    (this.#timer as { unref?: () => void }).unref?.();
  }
}
