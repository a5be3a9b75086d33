/** Most message ids one `wmp.message.ack` may name (its schema's bound). */
export const MAX_ACK_IDS = 500;

/**
 * The acknowledgements of the statuses a peer kept for us, sent together: a burst of statuses
 * handed on in one turn is acknowledged in one `wmp.message.ack` (up to MAX_ACK_IDS ids each) on
 * the next turn, not one frame per status (bench/results/issue28-federation.md). An id is added
 * only once its status was handed on; one that never leaves (the link dropped) is harmless: the
 * peer sends the status again, and it is passed on once for the whole relay.
 */
export class StatusAcks {
  readonly #send: (ids: string[]) => Promise<void>;
  #pending: string[] = [];
  #scheduled = false;

  constructor(send: (ids: string[]) => Promise<void>) {
    this.#send = send;
  }

  add(id: string): void {
    this.#pending.push(id);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const ids = this.#pending;
    this.#pending = [];
    for (let i = 0; i < ids.length; i += MAX_ACK_IDS) {
      void this.#send(ids.slice(i, i + MAX_ACK_IDS)).catch(() => undefined);
    }
  }
}
