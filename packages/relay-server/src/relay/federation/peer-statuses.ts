import { b64urlEncode, sha256, utf8 } from '@wmp/jcs-signing';
import { BoundedMap } from '@wmp/jsonrpc-envelope';
import type { StatusNotifier } from '../statuses/statuses.js';
import type { Logger } from '../support/logger.js';
import { copyMembers } from '../support/members.js';
import { type MessageStatus, STATUSES, type StatusParams, statusDetailOf } from '../support/status-params.js';
import type { FederationMetrics } from './federation-metrics.js';

export interface PeerStatusesDeps {
  readonly statuses: Pick<StatusNotifier, 'send'>;
  readonly metrics: FederationMetrics;
  /**
   * Records `key` until `expiresAt` once for the whole relay (every node of a cluster): true for
   * the first caller. The coordination's single-use cache.
   */
  readonly claim: (key: string, expiresAt: number) => Promise<boolean>;
  /** Whether `identity` has a live endpoint on another node of this relay's cluster. */
  readonly onlineElsewhere: (identity: string) => Promise<boolean>;
  /** The relay_id of the peer that is `sender`'s resolved home, when it is a peer whose relay_id is known. */
  readonly homePeerOf: (sender: string) => Promise<string | undefined>;
  readonly logger: Logger;
  readonly now: () => number;
  /** How long a status passed on is remembered, so that a copy of it is not passed on again (ms). */
  readonly dedupeMs: number;
  /** Senders remembered as reached through a peer. */
  readonly maxReturnRoutes: number;
}

/**
 * Statuses across relays (docs/federation-profile.md, "Statuses"): where the statuses of a sender
 * reached through a peer go back, and what is done with a status a peer sends back about a message
 * this relay forwarded. A relay on several nodes holds one peer link per node, and a peer may send
 * a status on each (or again, after a reconnect): each status, named by sender, message id,
 * recipient and status, is passed on once for the whole relay, then to the sender where it is
 * (live here, else kept in its queue, which reaches its node).
 */
export class PeerStatuses {
  readonly #deps: PeerStatusesDeps;
  /** Sender -> the relay_id of the peer it came through (oldest out); a hint: resolution backs it. */
  readonly #returnRoutes: BoundedMap<string, string>;

  constructor(deps: PeerStatusesDeps) {
    this.#deps = deps;
    this.#returnRoutes = new BoundedMap(deps.maxReturnRoutes);
  }

  /** `sender`'s messages came through the peer `relayId`: its statuses go back there. */
  learnReturnRoute(sender: string, relayId: string): void {
    this.#returnRoutes.delete(sender); // the newest route goes last: the oldest go first
    this.#returnRoutes.set(sender, relayId);
  }

  /**
   * A status for a sender whose messages came through a peer (learnt on this node) goes back to
   * that peer, as a status to the peer's own identity here naming the sender. True when sent so.
   */
  toPeer(sender: string, params: StatusParams): boolean {
    if (params.sender !== undefined) return false; // already on its way back
    const relayId = this.#returnRoutes.get(sender);
    if (relayId === undefined) return false;
    this.#deps.statuses.send(relayId, withSender(params, sender), true);
    return true;
  }

  /**
   * A status nobody here takes, for a sender this node learnt no route of (another node took its
   * message, or the relay restarted since): it goes to the sender's resolved home when that is a
   * peer. True when sent so.
   */
  async toHome(sender: string, params: StatusParams): Promise<boolean> {
    if (params.sender !== undefined) return false;
    // A home that cannot be told now (too many peers, a document that cannot be read): kept here.
    const relayId = await this.#deps.homePeerOf(sender).catch(() => undefined);
    if (relayId === undefined) return false;
    this.learnReturnRoute(sender, relayId);
    this.#deps.statuses.send(relayId, withSender(params, sender), true);
    return true;
  }

  /** A status a peer sent back over our link: to the sender it names, once for the whole relay. */
  async fromPeer(origin: string, params: Record<string, unknown>): Promise<void> {
    const { sender, message_id, status, recipient, queued_until, reason, data } = params;
    if (typeof sender !== 'string' || typeof message_id !== 'string' || !STATUSES.has(status as string)) {
      this.#deps.metrics.refusedIn('bad_status');
      return;
    }
    // A downstream relay's refusal, passed on as it said it (a code and a reason token, nothing else).
    const detail =
      status === 'dropped' && data !== null && typeof data === 'object'
        ? statusDetailOf((data as { code?: unknown }).code, data)
        : undefined;
    const named: StatusParams = {
      message_id,
      status: status as MessageStatus,
      ...(typeof recipient === 'string' ? { recipient } : {}),
      ...(typeof queued_until === 'string' ? { queued_until } : {}),
      ...(typeof reason === 'string' ? { reason } : {}),
      ...(detail ? { data: detail } : {}),
    };
    if (!(await this.#first(sender, named))) {
      this.#deps.metrics.statusDuplicate(origin);
      return;
    }
    this.#deps.metrics.statusBack(origin);
    // `queued` is only ever sent live; a sender live on another node gets it through its queue.
    const elsewhere = named.status === 'queued' && (await this.#deps.onlineElsewhere(sender));
    this.#deps.statuses.send(sender, named, true, elsewhere);
  }

  /**
   * Whether this is the first copy of the status: claimed once for the relay. The claim cannot be
   * asked (the coordination is down): passed on, a copy may then reach the sender twice.
   */
  async #first(sender: string, s: StatusParams): Promise<boolean> {
    const key = `wmp-status:${b64urlEncode(sha256(utf8(JSON.stringify([sender, s.message_id, s.recipient ?? '', s.status]))))}`;
    try {
      return await this.#deps.claim(key, this.#deps.now() + this.#deps.dedupeMs);
    } catch (e) {
      this.#deps.logger.warn('relay.federation.status_unclaimed', {
        error: (e as { code?: string }).code ?? 'unknown',
      });
      return true;
    }
  }
}

/** The status naming its sender (`{ ...params, sender }`, member by member: decision 0733). */
function withSender(params: StatusParams, sender: string): StatusParams {
  const named = copyMembers<Record<string, unknown>>({}, params);
  named.sender = sender;
  return named as unknown as StatusParams;
}
