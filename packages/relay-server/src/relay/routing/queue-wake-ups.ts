import type { Coordination } from '../../coordination/contracts/coordination.js';
import type { WakeUnsubscribe } from '../../coordination/contracts/wake-ups.js';
import type { Presence } from '../presence/presence.js';
import type { Endpoint } from '../support/endpoint.js';
import type { Logger } from '../support/logger.js';
import type { RelayEvents } from '../support/relay-events.js';
import type { Forwarder } from './forwarder.js';

/** How long a presence entry lives without a refresh (the directory refreshes it while held). */
const PRESENCE_TTL_MS = 30_000;

/** What a node holds for one identity with endpoints here. */
interface Watch {
  /** Settles once wake-ups for the identity reach this node (or it could not subscribe). */
  readonly ready: Promise<void>;
  unsubscribe: WakeUnsubscribe | undefined;
  /** The identity still has endpoints here (a subscribe that settles after the last went is undone). */
  wanted: boolean;
}

/** What the wake-ups take: the coordination, this node's endpoints and their pumps, the `noted` event. */
export interface WakeUpDeps {
  readonly coordination: Coordination;
  readonly presence: Pick<Presence, 'endpoints'>;
  /** Reads an endpoint's queue after its cursor (a wake-up, a rescan), or takes what a wake-up carried. */
  readonly forwarder: Pick<Forwarder, 'pump' | 'offerWoken'>;
  /** A note another node passed on for an identity with endpoints here (`note`). */
  readonly events: Pick<RelayEvents, 'noted'>;
  readonly logger: Logger;
  /** How often a cluster node reads every endpoint's queue anyway; only when `poll`. */
  readonly safetyPollMs: number;
  readonly poll: boolean;
}

/**
 * The nodes of a cluster tell each other of commits (docs/architecture.md, "Cluster wake-ups"):
 * after a message for an identity is committed, the writing node publishes a wake-up; a node with
 * endpoints of that identity reads the queue after their cursors. A node subscribes to an
 * identity's wake-ups when its first endpoint of it appears, before that endpoint's first read (the
 * pump waits for `ready`), and announces its presence; a lost wake-up costs latency only: every
 * reconnect of the coordination backend and a slow safety poll read every endpoint's queue again.
 */
export class QueueWakeUps {
  readonly #coordination: Coordination;
  readonly #presence: WakeUpDeps['presence'];
  readonly #forwarder: WakeUpDeps['forwarder'];
  readonly #events: WakeUpDeps['events'];
  readonly #logger: Logger;
  readonly #watches = new Map<string, Watch>();
  readonly #safetyPollMs: number | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopReconnect: (() => void) | undefined;

  constructor(deps: WakeUpDeps) {
    this.#coordination = deps.coordination;
    this.#presence = deps.presence;
    this.#forwarder = deps.forwarder;
    this.#events = deps.events;
    this.#logger = deps.logger;
    this.#safetyPollMs = deps.poll ? deps.safetyPollMs : undefined;
  }

  /** Identities with endpoints on this node that wake-ups are watched for. */
  get watched(): number {
    return this.#watches.size;
  }

  /** Rescans on every reconnect of the backend, and every `safetyPollMs` (a cluster node). */
  start(): void {
    this.#stopReconnect ??= this.#coordination.wakeUps.onReconnect(() => this.#rescan(false));
    if (this.#safetyPollMs !== undefined && this.#timer === undefined) {
      this.#timer = setInterval(() => this.#rescan(true), this.#safetyPollMs);
      this.#timer.unref?.();
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopReconnect?.();
    this.#stopReconnect = undefined;
    for (const [identity, watch] of this.#watches) this.#unwatch(identity, watch);
  }

  /** The first endpoint of `identity` on this node appeared: watch its wake-ups, say it is here. */
  identityUp(identity: string): void {
    const existing = this.#watches.get(identity);
    if (existing) {
      existing.wanted = true;
      return;
    }
    const watch: Watch = {
      unsubscribe: undefined,
      wanted: true,
      ready: this.#coordination.wakeUps
        .subscribe(identity, (seq, note, body) =>
          note === undefined ? this.#wake(identity, seq, body) : this.#events.noted(identity, note),
        )
        .then(
          (unsubscribe) => {
            if (unsubscribe === undefined) this.#logger.warn('relay.wake_up_unwatched', { reason: 'bound' });
            if (watch.wanted && this.#watches.get(identity) === watch) watch.unsubscribe = unsubscribe;
            else unsubscribe?.();
          },
          () => this.#logger.warn('relay.wake_up_unwatched', { reason: 'backend' }),
        ),
    };
    this.#watches.set(identity, watch);
    void this.#coordination.presence.announce(identity, this.#coordination.nodeId, PRESENCE_TTL_MS);
  }

  /** The last endpoint of `identity` on this node went. */
  identityDown(identity: string): void {
    const watch = this.#watches.get(identity);
    if (watch) this.#unwatch(identity, watch);
  }

  /** Settles when wake-ups of `identity` reach this node: a pump waits for it before its first read. */
  ready(identity: string): Promise<void> | undefined {
    return this.#watches.get(identity)?.ready;
  }

  /**
   * A message for `identity` was committed at `seq`: wake the nodes where it is (after COMMIT
   * only), with its stored text `body` when given (a caught-up endpoint there needs no read);
   * resolves how many nodes it woke, this one included.
   */
  committed(identity: string, seq: number, body?: string): Promise<number> {
    return this.#coordination.wakeUps.publish(identity, seq, body);
  }

  /**
   * Passes `note` to the other nodes where `identity` has endpoints (`RelayEvents.noted` there), best effort;
   * resolves how many took it (0: none, or the backend is down).
   */
  note(identity: string, note: string): Promise<number> {
    return this.#coordination.wakeUps.notify(identity, note);
  }

  #unwatch(identity: string, watch: Watch): void {
    watch.wanted = false;
    watch.unsubscribe?.();
    this.#watches.delete(identity);
    void this.#coordination.presence.withdraw(identity, this.#coordination.nodeId);
  }

  /**
   * Reads the queue of every endpoint of `identity` here that has not seen `seq` yet; with the
   * committed `body`, an endpoint caught up to just before it takes it without a read.
   */
  #wake(identity: string, seq: number | undefined, body: string | undefined): void {
    if (seq !== undefined && body !== undefined) {
      this.#forwarder.offerWoken(identity, seq, body);
      return;
    }
    for (const endpoint of this.#presence.endpoints(identity)) {
      if (!endpoint.running && seq !== undefined && endpoint.cursor >= seq) continue;
      void this.#forwarder.pump(endpoint);
    }
  }

  /** Every endpoint here (idle ones only for the safety poll: a running pump reads to the end). */
  #rescan(idleOnly: boolean): void {
    const endpoints: Endpoint[] = [];
    for (const identity of this.#watches.keys()) {
      for (const endpoint of this.#presence.endpoints(identity)) {
        if (!idleOnly || !endpoint.running) endpoints.push(endpoint);
      }
    }
    for (const endpoint of endpoints) void this.#forwarder.pump(endpoint);
  }
}
