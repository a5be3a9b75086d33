import type { QueueStore } from '../../storage/contracts/queue-store.js';
import { OUTBOX_PREFIX, originOfOutboxKey } from '../routing/outbox-entry.js';
import type { Logger } from '../support/logger.js';
import { relayOriginOf } from './federation-config.js';
import type { OutboxPump } from './outbox-pump.js';
import type { PeerLink } from './peer-link.js';

export interface OutboxWatchOptions {
  readonly queue: QueueStore;
  readonly logger: Logger;
  /** The peers this node has a link and a pump for. */
  readonly peers: () => Iterable<{ readonly link: PeerLink; readonly pump: OutboxPump }>;
  readonly known: (origin: string) => boolean;
  /** Starts the link and pump of a peer whose outbox was found in the store. */
  readonly adopt: (origin: string) => void;
  /** Most outboxes looked for at once. */
  readonly maxPeers: number;
  /** A cluster node: it polls (`pollMs`) and scans (`scanMs`); one process only scans at start. */
  readonly cluster: { readonly pollMs: number; readonly scanMs: number } | undefined;
}

/**
 * Finds outboxes that nobody here is sending (docs/federation-profile.md, "Store and forward", "On
 * a cluster"): at start, the outboxes in the store that hold something, of peers nobody configured
 * (their pumps would otherwise wait for the next message to that peer); on a cluster node also,
 * every `scanMs`, those another node appended to, and every `pollMs` each known peer's outbox
 * depth, so that the outbox of a node that died is sent by another.
 */
export class OutboxWatch {
  readonly #o: OutboxWatchOptions;
  readonly #timers: Array<ReturnType<typeof setInterval>> = [];

  constructor(options: OutboxWatchOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#timers.length > 0) return;
    void this.#scan();
    const cluster = this.#o.cluster;
    if (cluster === undefined) return;
    this.#timers.push(
      setInterval(() => void this.#poll(), cluster.pollMs),
      setInterval(() => void this.#scan(), cluster.scanMs),
    );
    for (const t of this.#timers) t.unref?.();
  }

  stop(): void {
    for (const t of this.#timers.splice(0)) clearInterval(t);
  }

  async #scan(): Promise<void> {
    try {
      for (const key of await this.#o.queue.recipientsWithPrefix(OUTBOX_PREFIX, this.#o.maxPeers)) {
        const origin = originOfOutboxKey(key);
        if (!this.#o.known(origin) && relayOriginOf(origin) === origin) this.#o.adopt(origin);
      }
    } catch (e) {
      // The store is down, or too many peers: the next scan (or the next message) tries again.
      this.#o.logger.warn('relay.federation.outbox_scan_failed', { error: (e as { code?: string }).code ?? 'unknown' });
    }
  }

  /** Kicks the pump of every peer whose outbox holds something (it takes the lease if it is free). */
  async #poll(): Promise<void> {
    for (const { link, pump } of this.#o.peers()) {
      if (!link.up) continue;
      try {
        if ((await this.#o.queue.stats(pump.key)).count > 0) pump.kick();
      } catch {
        // The store is down: the next poll tries again.
      }
    }
  }
}
