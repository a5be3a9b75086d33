import { BoundedMap, type JsonRpcNotification } from '@wmp/jsonrpc-envelope';
import type { MessageFallback, MessageStatusEvent, UndeliveredMessage } from './types.js';

type Pending = Omit<UndeliveredMessage, 'to' | 'status' | 'queuedUntil'>;

interface Watch {
  readonly message: Pending;
  readonly fallback: MessageFallback;
  /** Recipients already handed to the fallback: once each. */
  readonly done: Set<string>;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * A sent message as a stand-alone envelope for another channel (a sealed mailbox): the sender and
 * `client_message_id` in `wmp`, so a receiving client that gets both copies keeps one.
 */
export function fallbackEnvelope(
  sender: string,
  clientMessageId: string,
  content: Readonly<Record<string, unknown>>,
): JsonRpcNotification {
  return {
    jsonrpc: '2.0',
    method: 'wmp.message.deliver',
    params: { wmp: { version: '0.1', sender, client_message_id: clientMessageId }, ...content },
  };
}

/** Statuses that arrived before the send's answer named their message (HTTP: two channels). */
const MAX_EARLY = 64;

/**
 * Calls the application's fallback for messages the relay could not route live: a `queued` or
 * `dropped` status for a message sent with a fallback, within `windowMs` of its send. Bounded:
 * at most `max` messages are watched (the oldest is let go), and every timer is cleared on close.
 */
export class FallbackWatcher {
  readonly #max: number;
  readonly #windowMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #watches = new Map<string, Watch>();
  readonly #early = new BoundedMap<string, MessageStatusEvent[]>(MAX_EARLY);
  #closed = false;

  constructor(max: number, windowMs: number, onError: (error: unknown) => void) {
    this.#max = max;
    this.#windowMs = windowMs;
    this.#onError = onError;
  }

  /** Watch a sent message; statuses that already came for it are applied now. */
  watch(message: Pending, fallback: MessageFallback): void {
    if (this.#closed) return;
    if (this.#watches.size >= this.#max) this.#drop(this.#watches.keys().next().value as string);
    const timer = setTimeout(() => this.#drop(message.messageId), this.#windowMs);
    (timer as { unref?: () => void }).unref?.();
    this.#watches.set(message.messageId, { message, fallback, done: new Set(), timer });
    const early = this.#early.get(message.messageId);
    this.#early.delete(message.messageId);
    for (const status of early ?? []) this.status(status);
  }

  /** Every status the client receives. */
  status(status: MessageStatusEvent): void {
    if (this.#closed || (status.status !== 'queued' && status.status !== 'dropped')) return;
    const watch = this.#watches.get(status.messageId);
    if (!watch) {
      // Perhaps the send's answer is still on its way: keep a few, briefly.
      const list = this.#early.get(status.messageId) ?? [];
      if (list.length < 16) list.push(status);
      this.#early.set(status.messageId, list);
      return;
    }
    const to = status.recipient;
    if (to === undefined || watch.done.has(to)) return;
    watch.done.add(to);
    const undelivered: UndeliveredMessage = {
      ...watch.message,
      to,
      status: status.status,
      queuedUntil: status.queuedUntil,
    };
    try {
      Promise.resolve(watch.fallback(undelivered)).catch(this.#onError);
    } catch (e) {
      this.#onError(e);
    }
  }

  close(): void {
    this.#closed = true;
    for (const id of [...this.#watches.keys()]) this.#drop(id);
    this.#early.clear();
  }

  #drop(messageId: string): void {
    const watch = this.#watches.get(messageId);
    if (!watch) return;
    clearTimeout(watch.timer);
    this.#watches.delete(messageId);
  }
}
