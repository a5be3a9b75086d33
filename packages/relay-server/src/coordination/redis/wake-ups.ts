import { randomBytes } from 'node:crypto';
import {
  DEFAULT_WAKE_UP_LIMITS,
  MAX_WAKE_BODY_CHARS,
  MAX_WAKE_NOTE_CHARS,
  type WakeHandler,
  type WakeUnsubscribe,
  type WakeUpLimits,
  type WakeUps,
} from '../contracts/wake-ups.js';
import type { RedisKeys } from './keys.js';
import type { RedisLink } from './link.js';

/** Failed publishes kept to send again after reconnect (one per recipient, the highest seq). */
export const MAX_PENDING_WAKE_UPS = 10_000;

interface Channel {
  readonly recipient: string;
  readonly handlers: Set<WakeHandler>;
  /** Subscribed at the server, as far as this node knows (node-redis restores it on reconnect). */
  active: boolean;
  /** A reconcile loop is bringing `active` in line with `handlers`. */
  running: Promise<void> | undefined;
}

/**
 * Wake-ups over Redis sharded pub/sub: `SPUBLISH {prefix}{kind}:{recipient} "<seq>:<tag>"` after a
 * commit, `"<seq>:<tag>:<body>"` with the committed text (a node of an older version takes it for
 * the wake-up alone), a note `"!<tag>:<note>"` (which such a node takes for a wake-up); one
 * `SSUBSCRIBE` per recipient with local handlers on this node (the recipient inside a hash tag). A publish calls this node's handlers at once and Redis carries it to the others (this
 * node ignores its own echo by `tag`). Subscriptions are desired state: a reconcile loop per
 * channel subscribes or unsubscribes until the server agrees, and every (re)connect of the
 * subscriber connection reconciles all of them, then runs the `onReconnect` handlers (the caller
 * rescans: what was published meanwhile is lost). Failed publishes are sent again after the
 * command connection is back.
 */
export class RedisWakeUps implements WakeUps {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #kind: string;
  readonly #channels = new Map<string, Channel>();
  readonly #pending = new Map<string, number | undefined>();
  readonly #reconnect = new Set<() => void>();
  readonly #maxPerKey: number;
  readonly #max: number;
  readonly #onError: (error: unknown) => void;
  readonly #tag = randomBytes(9).toString('base64url');
  readonly #maxNoteChars: number;
  readonly #maxBodyChars: number;
  readonly #listener = (message: string, channel: string) => this.#onMessage(message, channel);
  readonly #off: (() => void)[];
  #count = 0;
  #closed = false;
  /** Reconnects handled (for tests and metrics). */
  reconnects = 0;

  constructor(
    link: RedisLink,
    keys: RedisKeys,
    kind: string,
    options: {
      limits?: WakeUpLimits;
      onError?: (error: unknown) => void;
      maxNoteChars?: number;
      maxBodyChars?: number;
    } = {},
  ) {
    this.#maxNoteChars = options.maxNoteChars ?? MAX_WAKE_NOTE_CHARS;
    this.#maxBodyChars = options.maxBodyChars ?? MAX_WAKE_BODY_CHARS;
    this.#link = link;
    this.#keys = keys;
    this.#kind = kind;
    this.#maxPerKey = options.limits?.maxPerKey ?? DEFAULT_WAKE_UP_LIMITS.maxPerKey;
    this.#max = options.limits?.max ?? DEFAULT_WAKE_UP_LIMITS.max;
    this.#onError = options.onError ?? (() => {});
    this.#off = [
      link.onReady('subscriber', () => void this.#afterReconnect()),
      link.onReady('commands', () => void this.#flushPending()),
    ];
  }

  /** Handlers held by this node. */
  get size(): number {
    return this.#count;
  }

  /** Channels this node is subscribed to at the server, as far as it knows. */
  get activeChannels(): number {
    let n = 0;
    for (const channel of this.#channels.values()) if (channel.active) n++;
    return n;
  }

  async publish(recipient: string, seq?: number, body?: string): Promise<number> {
    const name = this.#keys.channel(this.#kind, recipient);
    const local = this.#deliver(name, seq);
    if (this.#closed) return local ? 1 : 0;
    // Over the bound, or without a seq to place it at, the wake-up goes as a hint.
    const carried = seq !== undefined && body !== undefined && body.length <= this.#maxBodyChars ? body : undefined;
    try {
      return await this.#send(name, seq, carried);
    } catch {
      this.#remember(name, seq);
      return local ? 1 : 0;
    }
  }

  async notify(recipient: string, note: string): Promise<number> {
    if (this.#closed || note.length > this.#maxNoteChars) return 0;
    const name = this.#keys.channel(this.#kind, recipient);
    // Our own subscriber hears it too (and drops it, by tag): it is not another node.
    const own = this.#channels.get(name)?.active === true ? 1 : 0;
    try {
      const reached = await this.#link.call((c) => c.sPublish(name, `!${this.#tag}:${note}`));
      return Math.max(0, reached - own);
    } catch {
      return 0;
    }
  }

  async subscribe(recipient: string, handler: WakeHandler): Promise<WakeUnsubscribe | undefined> {
    if (this.#closed) return undefined;
    const name = this.#keys.channel(this.#kind, recipient);
    let channel = this.#channels.get(name);
    if ((channel?.handlers.size ?? 0) >= this.#maxPerKey || this.#count >= this.#max) return undefined;
    if (channel === undefined) {
      channel = { recipient, handlers: new Set(), active: false, running: undefined };
      this.#channels.set(name, channel);
    }
    // One registration per call, even for the same function twice.
    const own: WakeHandler = (seq, note, body) => handler(seq, note, body);
    channel.handlers.add(own);
    this.#count++;
    const held = channel;
    let done = false;
    const unsubscribe = () => {
      if (done) return;
      done = true;
      if (!held.handlers.delete(own)) return;
      this.#count--;
      if (held.handlers.size === 0) void this.#reconcile(name, held);
    };
    // Bounded: a hung server must not hold the caller (the subscription settles when it answers).
    await this.#link.bounded(this.#reconcile(name, channel)).catch(() => {});
    return unsubscribe;
  }

  onReconnect(handler: () => void): () => void {
    this.#reconnect.add(handler);
    return () => this.#reconnect.delete(handler);
  }

  listening(recipient: string): boolean {
    const channel = this.#channels.get(this.#keys.channel(this.#kind, recipient));
    return !this.#closed && channel?.active === true && channel.handlers.size > 0 && this.#link.subscriber.isReady;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const off of this.#off) off();
    const names = [...this.#channels].filter(([, c]) => c.active).map(([name]) => name);
    this.#channels.clear();
    this.#pending.clear();
    this.#count = 0;
    if (names.length > 0 && this.#link.subscriber.isReady) {
      await this.#link.bounded(this.#link.subscriber.sUnsubscribe(names, this.#listener)).catch(() => {});
    }
  }

  /** Brings the server's subscription of `name` in line with its handlers; resolves when it is, or the link is down. */
  #reconcile(name: string, channel: Channel): Promise<void> {
    if (channel.running !== undefined) return channel.running;
    if (!this.#unsettled(channel)) {
      this.#forget(name, channel);
      return Promise.resolve();
    }
    // `finally` runs asynchronously, so `running` is set before it is cleared.
    const running = this.#settle(name, channel).finally(() => {
      channel.running = undefined;
      this.#forget(name, channel);
    });
    channel.running = running;
    return running;
  }

  /** Whether the server's subscription differs from what the handlers want, and can be changed now. */
  #unsettled(channel: Channel): boolean {
    return !this.#closed && this.#link.subscriber.isReady && channel.handlers.size > 0 !== channel.active;
  }

  async #settle(name: string, channel: Channel): Promise<void> {
    const subscriber = this.#link.subscriber;
    try {
      // Again until it agrees: handlers may come and go while a command is on its way.
      while (this.#unsettled(channel)) {
        if (channel.handlers.size > 0) {
          await subscriber.sSubscribe(name, this.#listener);
          channel.active = true;
        } else {
          await subscriber.sUnsubscribe(name, this.#listener);
          channel.active = false;
        }
      }
    } catch {
      // The connection went: the next ready reconciles again.
    }
  }

  /** Drops a channel with no handlers and no subscription. */
  #forget(name: string, channel: Channel): void {
    if (channel.handlers.size === 0 && !channel.active && this.#channels.get(name) === channel)
      this.#channels.delete(name);
  }

  async #afterReconnect(): Promise<void> {
    if (this.#closed) return;
    // node-redis has restored every confirmed subscription before `ready`; reconcile the rest.
    await Promise.all([...this.#channels].map(([name, channel]) => this.#reconcile(name, channel)));
    if (this.#closed || !this.#link.subscriber.isReady) return; // lost again: the next ready does it
    this.reconnects++;
    for (const handler of [...this.#reconnect]) {
      try {
        handler();
      } catch (error) {
        this.#onError(error);
      }
    }
  }

  async #flushPending(): Promise<void> {
    const pending = [...this.#pending];
    this.#pending.clear();
    await Promise.all(
      pending.map(async ([name, seq]) => {
        try {
          await this.#send(name, seq);
        } catch {
          this.#remember(name, seq);
        }
      }),
    );
  }

  #send(name: string, seq: number | undefined, body?: string): Promise<number> {
    const message = body === undefined ? `${seq ?? ''}:${this.#tag}` : `${seq}:${this.#tag}:${body}`;
    return this.#link.call((c) => c.sPublish(name, message));
  }

  #remember(name: string, seq: number | undefined): void {
    if (!this.#pending.has(name) && this.#pending.size >= MAX_PENDING_WAKE_UPS) return; // the safety poll covers it
    // Merged: the highest seq, or none when either did not know it (a handler then reads anyway).
    const merged = !this.#pending.has(name) ? seq : mergeSeq(this.#pending.get(name), seq);
    this.#pending.set(name, merged);
  }

  #onMessage(message: string, name: string): void {
    if (message.startsWith('!')) {
      const tagEnd = message.indexOf(':');
      if (tagEnd < 0 || message.slice(1, tagEnd) === this.#tag) return;
      this.#deliver(name, undefined, message.slice(tagEnd + 1));
      return;
    }
    const colon = message.indexOf(':');
    if (colon < 0) return; // not ours to read
    const tagEnd = message.indexOf(':', colon + 1);
    if ((tagEnd < 0 ? message.slice(colon + 1) : message.slice(colon + 1, tagEnd)) === this.#tag) return; // our own echo
    const text = message.slice(0, colon);
    const seq = text === '' ? undefined : Number(text);
    const known = seq !== undefined && Number.isSafeInteger(seq) ? seq : undefined;
    // A body only with the seq it was committed at.
    const body = tagEnd < 0 || known === undefined ? undefined : message.slice(tagEnd + 1);
    this.#deliver(name, known, undefined, body);
  }

  /** Calls this node's handlers of channel `name`; whether there were any. */
  #deliver(name: string, seq: number | undefined, note?: string, body?: string): boolean {
    const channel = this.#channels.get(name);
    if (channel === undefined || channel.handlers.size === 0) return false;
    for (const handler of [...channel.handlers]) {
      try {
        handler(seq, note, body);
      } catch (error) {
        this.#onError(error);
      }
    }
    return true;
  }
}

function mergeSeq(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : Math.max(a, b);
}
