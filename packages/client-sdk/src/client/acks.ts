import type { WmpSession } from '@wmp/session';

/** Ids per `wmp.message.ack` (the schema's limit). */
const MAX_IDS_PER_ACK = 500;

/**
 * `wmp.message.ack` for messages the application has had, batched per session within one
 * turn of the event loop. An ack that cannot be sent (the connection dropped) is simply lost:
 * the relay delivers the message again and the dedupe drops it, acknowledging it anew.
 */
export class AckBatcher {
  readonly #pending = new Map<WmpSession, string[]>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  add(session: WmpSession, messageId: string): void {
    if (this.#closed) return;
    const ids = this.#pending.get(session) ?? [];
    ids.push(messageId);
    this.#pending.set(session, ids);
    if (ids.length >= MAX_IDS_PER_ACK) {
      void this.flush();
      return;
    }
    this.#timer ??= setTimeout(() => void this.flush(), 0);
  }

  /** Sends everything batched so far. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batches = [...this.#pending];
    this.#pending.clear();
    await Promise.all(
      batches.flatMap(([session, ids]) => {
        const sends: Promise<void>[] = [];
        for (let i = 0; i < ids.length; i += MAX_IDS_PER_ACK) {
          const message_ids = ids.slice(i, i + MAX_IDS_PER_ACK);
          sends.push(session.notify('wmp.message.ack', { message_ids, status: 'received' }).catch(() => undefined));
        }
        return sends;
      }),
    );
  }

  /** Drops what is batched and accepts nothing more. */
  discard(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.clear();
    this.#closed = true;
  }

  /** Sends what is batched, then accepts nothing more. */
  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
  }
}
