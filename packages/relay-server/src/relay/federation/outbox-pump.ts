import { ReconnectPolicy } from '@wmp/transports';
import type { QueuedMessage, QueueStore } from '../../storage/contracts/queue-store.js';
import { outboxKey, parseOutboxEntryId } from '../routing/outbox-entry.js';
import type { Logger } from '../support/logger.js';
import type { PeerLink } from './peer-link.js';

/** Entries read per outbox page. */
const PAGE = 100;

/** Error codes of a peer that mean "later", not "never": the entry stays and is sent again. */
const RETRYABLE = new Set([-31007, -32603, -32000, -31000, -31001]);

/**
 * For an entry of a session routed through the peer (it names the session), "unknown" or
 * "expired" session is final: that session is durable at the peer, so it ended there.
 */
const ROUTE_GONE = new Set([-31000, -31001]);

export interface ForwardRefusal {
  readonly entry: QueuedMessage;
  readonly recipient: string;
  readonly messageId: string;
  readonly code: number;
  /** The peer's `data` of its refusal (its `reason` says which case), or undefined. */
  readonly data?: unknown;
}

/** An outbox entry the peer took. */
export interface ForwardedEntry {
  readonly entry: QueuedMessage;
  readonly recipient: string;
  readonly messageId: string;
}

export interface OutboxPumpOptions {
  readonly queue: QueueStore;
  readonly link: PeerLink;
  readonly logger: Logger;
  readonly now: () => number;
  readonly maxInFlight: number;
  /** The peer refused an entry for good: its sender hears `dropped`, and the entry goes. */
  readonly onrefused: (refusal: ForwardRefusal) => void;
  /** Entries are on the peer's disk (their JSON-RPC results came). */
  readonly onforwarded: (forwarded: readonly ForwardedEntry[]) => void;
  /** Before an entry goes: refuses it (returns an error code) when the peer cannot take it (ERDS, evidence). */
  readonly check?: (params: Record<string, unknown>, entry: QueuedMessage) => number | undefined;
  /**
   * Runs a pass while this node holds the outbox's lease (stores several nodes share: one node of
   * a cluster sends a peer's outbox at a time); `ran: false` when another node holds it.
   */
  readonly lease?: (pass: () => Promise<void>) => Promise<{ readonly ran: boolean }>;
  /** How long a node that found the lease held waits before it tries again (ms). */
  readonly leaseRetryMs?: number;
}

/** Default wait before a node that found the outbox's lease held tries again. */
const LEASE_RETRY_MS = 2_000;

/**
 * Sends a peer's outbox to it, in seq order, while its link is up (docs/federation-profile.md,
 * "Store and forward"): each entry as a `wmp.message.deliver` request, removed only when the peer's
 * result says it is on the peer's disk. A link that drops, or an answer that does not come, sends
 * everything not removed again from the start once the link is back (the peer takes a message id
 * once per recipient, so a resend is harmless).
 */
export class OutboxPump {
  readonly #o: OutboxPumpOptions;
  readonly key: string;
  #cursor = 0;
  #running = false;
  #again = false;
  #failures = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #leaseRetry: ReturnType<typeof setTimeout> | undefined;
  #sending = false;
  /** Wakes a run waiting for a page to settle: something was appended. */
  #kicked: (() => void) | undefined;
  readonly #backoff = new ReconnectPolicy({
    initialDelayMs: 200,
    maxDelayMs: 30_000,
    maxAttempts: Number.POSITIVE_INFINITY,
  });

  constructor(origin: string, options: OutboxPumpOptions) {
    this.#o = options;
    this.key = outboxKey(origin);
  }

  /** This node is sending the outbox now (in a cluster: it holds the outbox's lease). */
  get sending(): boolean {
    return this.#sending;
  }

  /** Something was appended, or the link came up: send what waits. */
  kick(): void {
    if (!this.#o.link.up) {
      this.#o.link.ensure();
      return;
    }
    if (this.#running) {
      this.#again = true;
      this.#kicked?.();
      return;
    }
    void this.#run();
  }

  /** The link dropped: the next run starts from the first entry not removed. */
  reset(): void {
    this.#cursor = 0;
  }

  /** Stops a retry that is waiting. */
  stop(): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    clearTimeout(this.#leaseRetry);
    this.#leaseRetry = undefined;
  }

  /**
   * Another node holds the lease: try again a little later (with jitter), since what was kicked
   * here may have been committed after that node's last read, and that node may die.
   */
  #leaseLater(): void {
    if (this.#leaseRetry !== undefined) return;
    const base = this.#o.leaseRetryMs ?? LEASE_RETRY_MS;
    this.#leaseRetry = setTimeout(
      () => {
        this.#leaseRetry = undefined;
        this.kick();
      },
      base / 2 + Math.random() * base,
    );
    (this.#leaseRetry as { unref?: () => void }).unref?.();
  }

  /** Sends again after a backoff with jitter (the peer is up but did not take everything). */
  #later(): void {
    if (this.#retry !== undefined) return;
    this.#failures++;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.kick();
    }, this.#backoff.nextDelay(this.#failures));
    (this.#retry as { unref?: () => void }).unref?.();
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      const lease = this.#o.lease;
      if (lease === undefined) await this.#pass();
      else if (!(await lease(() => this.#pass())).ran) this.#leaseLater();
    } catch (e) {
      this.#cursor = 0;
      this.#later();
      this.#o.logger.warn('relay.federation.outbox_failed', { error: (e as { code?: string }).code ?? 'unknown' });
    } finally {
      this.#running = false;
    }
  }

  /** Sends pages until the outbox is empty, the link is down, or the peer did not take a page. */
  async #pass(): Promise<void> {
    // Another node may have sent and removed entries since this node last read: read from the start.
    if (this.#o.lease !== undefined) this.#cursor = 0;
    this.#sending = true;
    try {
      await this.#pages();
    } finally {
      this.#sending = false;
    }
  }

  /**
   * Pages in flight one after the other, up to `maxInFlight` entries: the next page goes while the
   * peer commits the last one (a page waited for its answers before: the link idled for each of
   * the peer's commits, bench/results/targets.md (f)). Any entry not taken stops the reading; once
   * what is in flight settled, everything not removed is sent again from the start, later.
   */
  async #pages(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let entries = 0;
    let failed = false;
    for (;;) {
      this.#again = false;
      let more = true;
      while (more && this.#o.link.up && !failed) {
        const room = this.#o.maxInFlight - entries;
        if (room < 1) {
          await Promise.race(inFlight);
          continue;
        }
        const page = await this.#o.queue.after(this.key, this.#cursor, Math.min(PAGE, room), this.#o.now());
        more = page.more;
        if (page.messages.length === 0) break;
        this.#cursor = page.next;
        const n = page.messages.length;
        entries += n;
        const sent: Promise<void> = this.#send(page.messages)
          .then(
            (ok) => {
              if (!ok) failed = true;
            },
            () => {
              failed = true;
            },
          )
          .finally(() => {
            entries -= n;
            inFlight.delete(sent);
          });
        inFlight.add(sent);
      }
      if (failed || !this.#o.link.up || (!this.#again && inFlight.size === 0)) break;
      // Appended meanwhile: read on at once; else wait for a page to settle, or for an append.
      if (!this.#again) {
        await Promise.race([
          ...inFlight,
          new Promise<void>((wake) => {
            this.#kicked = wake;
          }),
        ]);
        this.#kicked = undefined;
      }
    }
    await Promise.all(inFlight);
    if (failed) {
      this.#cursor = 0;
      this.#later();
      return;
    }
    this.#failures = 0;
  }

  /**
   * Sends one page at once, in as few frames as the peer takes (`PeerLink.forwardPage`: its
   * answers come together once the batch is on the peer's disk); removes what the peer took or
   * refused. False: some must be sent again.
   */
  async #send(entries: readonly QueuedMessage[]): Promise<boolean> {
    const parsed = entries.map((entry) => {
      const { recipient, messageId } = parseOutboxEntryId(entry.id);
      const params = (JSON.parse(entry.body) as { params: Record<string, unknown> }).params;
      return { entry, recipient, messageId, params, refused: this.#o.check?.(params, entry) };
    });
    const going = parsed.filter((p) => p.refused === undefined);
    const sent = this.#o.link.forwardPage(
      going.map((p) => ({ params: p.params, bytes: Buffer.byteLength(p.entry.body) })),
    );
    const answers = new Map(going.map((p, i) => [p, sent[i]!]));
    const outcomes = await Promise.all(
      parsed.map(async (p) => {
        const { entry, recipient, messageId, params, refused } = p;
        if (refused !== undefined) return { entry, recipient, messageId, code: refused };
        try {
          await answers.get(p);
          return { entry, recipient, messageId, code: 0 };
        } catch (e) {
          const { code, data } = e as { code?: unknown; data?: { reason?: unknown } };
          const routed = typeof (params.wmp as { session_id?: unknown } | undefined)?.session_id === 'string';
          // A JSON-RPC refusal is the peer's answer; anything else (closed, timed out) is a retry,
          // and so is "not a peer" (the peer may not have read our well-known yet).
          const final =
            typeof code === 'number' &&
            (!RETRYABLE.has(code) || (routed && ROUTE_GONE.has(code))) &&
            data?.reason !== 'not_a_peer';
          return { entry, recipient, messageId, code: final ? code : -1, data };
        }
      }),
    );
    const done = outcomes.filter((o) => o.code !== -1);
    if (done.length > 0) {
      await this.#o.queue.ack(
        this.key,
        done.map((o) => o.entry.id),
      );
      const forwarded = done.filter((o) => o.code === 0);
      if (forwarded.length > 0) this.#o.onforwarded(forwarded);
      for (const o of done) if (o.code !== 0) this.#o.onrefused(o);
    }
    return done.length === outcomes.length;
  }
}
