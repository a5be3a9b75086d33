import {
  DEFAULT_MAX_EVENT_BYTES,
  isBoxOrigin,
  OHAN_SKEW_SECONDS,
  type OhanEvent,
  stampStrength,
  verifyCard,
} from '@wmp/ohan-seal';
import type { FetchLike } from '@wmp/transports';
import type { Card, Identity } from '../identity/identity.js';
import { MemoryClientStore } from '../store/memory-store.js';
import type { ClientStore } from '../store/store.js';
import { hasTlsOptions, type TlsOptions } from '../tls/options.js';
import { BoxClient } from './box-client.js';
import type { BoxLimitsInfo } from './box-limits.js';
import { MailboxError } from './errors.js';
import type { MailMessage, RejectedEvent } from './examine.js';
import { HandlerFailure, Intake } from './intake.js';
import { signingKeyOf } from './keys.js';
import { AsyncLock } from './lock.js';
import type { AllowOutcome, CardOutcome, PublishOutcome } from './outcomes.js';
import { type Recipient, type SendOptions, type SendResult, sendSealed } from './send.js';
import { type MailboxWatch, startWatch, type WatchOptions } from './watch.js';

/** Where the mailbox keeps the card it published last (its own relays). */
export const CARD_STORE_KEY = 'mailbox/card';

/** Stamp strength `send` mints at most by default: 2^26 hashes is a few seconds on one core. */
export const DEFAULT_MAX_STAMP_BITS = 26;
const LIMITS_TTL_MS = 10 * 60_000;

export interface MailboxOptions {
  readonly identity: Identity;
  /** Cursors, the dedupe set and the card. Default: a new `MemoryClientStore` (nothing survives the process). */
  readonly store?: ClientStore;
  /** This identity's boxes (fetch, watch, allow list). Default: the relays of the card published through this store. */
  readonly relays?: readonly string[];
  /** Default: the global `fetch` (`@wmp/client-sdk/node`'s Mailbox: `nodeFetch`). */
  readonly fetch?: FetchLike;
  /**
   * A CA to trust and a client certificate for mTLS (PEM). Node only: the `Mailbox` of
   * `@wmp/client-sdk/node` applies them to its fetch; this one (browser-safe) refuses them
   * with `tls_options`.
   */
  readonly tls?: TlsOptions;
  /** The clock, in ms (default `Date.now`): event and request times, verification, dedupe expiry. */
  readonly now?: () => number;
  /** Per request, in ms (default 15 000). */
  readonly timeoutMs?: number;
  /** Highest stamp `send` mints for a box (default 26 bits); a box asking more is `stamp_too_costly`. */
  readonly maxStampBits?: number;
  /** Largest event read from a box (default 96 KiB, the profile's). */
  readonly maxEventBytes?: number;
  /** Clock skew allowed when verifying events (default 300 s). */
  readonly skewSeconds?: number;
  /** Event and envelope ids remembered for deduplication (default 10 000, oldest dropped first). */
  readonly maxSeen?: number;
}

export interface FetchOptions {
  /** Called for each new message before it is acknowledged, and awaited: a throw stops the fetch there and rejects it; that message comes again next time. */
  readonly onMessage?: (message: MailMessage) => void | Promise<void>;
  readonly signal?: AbortSignal;
  /** Pages (of 100 events) read per relay per call; default 50. */
  readonly maxPages?: number;
}

export interface FetchResult {
  /** New messages, each once (deduplicated across relays and fetches), in the order taken. */
  readonly messages: readonly MailMessage[];
  /** Events refused (never handed over), with the relay and reason. */
  readonly rejected: readonly RejectedEvent[];
  /** Relays that failed (unreachable, refused the request, or refused an acknowledgement). */
  readonly errors: readonly MailboxError[];
  /** True when a relay had more than `maxPages` pages: call again. */
  readonly more: boolean;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** Changes and reads of this identity's allow list on each of its boxes (the contact lane). */
export interface AllowList {
  /** The union of the allow lists of the boxes that answered. Throws the first error if none did. */
  list(options?: CallOptions): Promise<string[]>;
  /** Adds contacts (`did:key` or Multikey) on every box; per relay outcome. */
  add(keys: readonly string[], options?: CallOptions): Promise<AllowOutcome[]>;
  remove(keys: readonly string[], options?: CallOptions): Promise<AllowOutcome[]>;
}

/**
 * OHAN offline mail for one identity: publish and look up cards, send sealed WMP messages to
 * every box on a recipient's card, and take one's own mail from every box on one's card (fetch
 * or watch), each message once, acknowledging it after it was handed over.
 */
export class Mailbox {
  readonly identity: Identity;
  readonly store: ClientStore;
  readonly allow: AllowList;
  readonly #options: MailboxOptions;
  readonly #fetch: FetchLike;
  readonly #now: () => number;
  readonly #lock = new AsyncLock();
  readonly #intake: Intake;
  readonly #clients = new Map<string, BoxClient>();
  readonly #limits = new Map<string, { limits: BoxLimitsInfo; at: number }>();
  readonly #maxEventBytes: number;

  constructor(options: MailboxOptions) {
    if (hasTlsOptions(options.tls)) throw new MailboxError('tls_options');
    this.identity = options.identity;
    this.store = options.store ?? new MemoryClientStore();
    this.#options = options;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#now = options.now ?? Date.now;
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (options.relays !== undefined) checkRelays(options.relays);
    this.#intake = new Intake({
      identity: this.identity,
      store: this.store,
      now: this.#now,
      skewSeconds: options.skewSeconds ?? OHAN_SKEW_SECONDS,
      maxEventBytes: this.#maxEventBytes,
      maxSeen: options.maxSeen ?? 10_000,
    });
    this.allow = {
      list: (o) => this.#allowList(o),
      add: (keys, o) => this.#allowChange(keys, 'add', o),
      remove: (keys, o) => this.#allowChange(keys, 'remove', o),
    };
  }

  /** This identity's relays: the `relays` option, else those of the card published through this store. */
  async relays(): Promise<string[]> {
    if (this.#options.relays !== undefined) return [...this.#options.relays];
    const card = await this.card();
    if (card === undefined) throw new MailboxError('no_relays');
    return [...card.relays];
  }

  /** The card last published through this store, if any. */
  async card(): Promise<Card | undefined> {
    const text = await this.store.get(CARD_STORE_KEY);
    if (text === undefined) return undefined;
    try {
      const verdict = verifyCard(JSON.parse(text));
      return verdict.ok && verdict.card.key === this.identity.signingKey ? verdict.card : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Signs a card listing `relays` (1..16 box origins) and posts it to each of them; once at least
   * one box took it, it is kept in the store (it names this mailbox's relays from now on). A card
   * no box took is not kept (`saved: false`): the one before stays. Relay-only boxes have no
   * directory: their outcome is a `not_found` error, yet they answered, so the card is kept.
   */
  async publishCard(
    relays: readonly string[],
    options: CallOptions = {},
  ): Promise<{ card: Card; outcomes: CardOutcome[]; saved: boolean }> {
    checkRelays(relays);
    // Stamped at the strictest stranger strength of the boxes that have a directory: a box asks it
    // of a key it does not know yet (docs/ohan-profile.md, "The card"), and one card goes to all of
    // them.
    const bits = await this.#cardStampBits(relays, options.signal);
    if (bits > (this.#options.maxStampBits ?? DEFAULT_MAX_STAMP_BITS)) {
      throw new MailboxError('stamp_too_costly', { reason: String(bits) });
    }
    const card = await this.identity.createCard(relays, new Date(this.#now()), {
      bits,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const outcomes = await Promise.all(
      relays.map(async (relay): Promise<CardOutcome> => {
        try {
          return { relay, ok: true, status: await this.#client(relay).postCard(card, options.signal) };
        } catch (error) {
          if (error instanceof MailboxError) return { relay, ok: false, error };
          throw error;
        }
      }),
    );
    const saved = outcomes.some((o) => o.ok || o.error.code === 'not_found');
    if (saved) await this.store.set(CARD_STORE_KEY, JSON.stringify(card));
    return { card, outcomes, saved };
  }

  /**
   * The card of `key` (`did:key` or Multikey) from a directory box, verified and checked to be
   * that key's; `undefined` when the box has none. A card that does not verify is `bad_response`.
   */
  async lookupCard(key: string, relay: string, options: CallOptions = {}): Promise<Card | undefined> {
    const signingKey = signingKeyOf(key);
    checkRelays([relay]);
    const value = await this.#client(relay).lookupCard(signingKey, options.signal);
    if (value === undefined) return undefined;
    const verdict = verifyCard(value);
    if (!verdict.ok) throw new MailboxError('bad_response', { relay, reason: verdict.reason });
    if (verdict.card.key !== signingKey) throw new MailboxError('bad_response', { relay, reason: 'key' });
    return verdict.card;
  }

  /**
   * Seals `envelope` (one JSON-RPC message object) to the recipient's card and publishes it to
   * every relay on it. Resolves with one outcome per relay; rejects only for a bad card or
   * envelope (`invalid_card`, `invalid_envelope`, `too_large`) or the signal's abort.
   */
  send(to: Recipient, envelope: object, options: SendOptions = {}): Promise<SendResult> {
    return sendSealed(to, envelope, options, {
      identity: this.identity,
      now: this.#now,
      maxStampBits: this.#options.maxStampBits ?? DEFAULT_MAX_STAMP_BITS,
      client: (relay) => this.#client(relay),
      limits: (client, signal) => this.#limitsOf(client, signal),
      publish: (event, relays, signal) => this.publishEvent(event, relays, signal),
    });
  }

  /** Publishes an event as it is to each relay (in parallel); per relay outcome. */
  publishEvent(event: OhanEvent, relays: readonly string[], signal?: AbortSignal): Promise<PublishOutcome[]> {
    const stampBits = stampStrength(event);
    return Promise.all(
      relays.map(async (relay): Promise<PublishOutcome> => {
        try {
          const status = await this.#client(relay).publish(event, signal);
          return { relay, ok: true, status, eventId: event.id, stampBits };
        } catch (error) {
          if (error instanceof MailboxError) return { relay, ok: false, error, eventId: event.id };
          throw error;
        }
      }),
    );
  }

  /**
   * Takes new mail from every relay of this identity: pages from each relay's cursor, verifies and
   * opens every event, hands each message over once, saves cursors and the dedupe set, then
   * acknowledges (`POST /delivered`). A relay that fails is reported in `errors`; the others go on.
   */
  async fetch(options: FetchOptions = {}): Promise<FetchResult> {
    const relays = await this.relays();
    const messages: MailMessage[] = [];
    const rejected: RejectedEvent[] = [];
    const errors: MailboxError[] = [];
    const sink = {
      message: async (message: MailMessage) => {
        await options.onMessage?.(message);
        messages.push(message);
      },
      rejected: (r: RejectedEvent) => rejected.push(r),
    };
    const maxPages = options.maxPages ?? 50;
    let more = false;
    for (const relay of relays) {
      const client = this.#client(relay);
      try {
        await this.#lock.run(async () => {
          const pending = await this.#intake.flushAcks(client, options.signal);
          if (pending) errors.push(pending);
          for (let page = 0; page < maxPages; page++) {
            const { after } = await this.#intake.state(relay);
            const served = await client.fetchPage(after, options.signal);
            const ackError = await this.#intake.take(client, served.events, served.next, sink, options.signal);
            if (ackError) errors.push(ackError);
            if (!served.more) return;
          }
          more = true;
        });
      } catch (error) {
        if (error instanceof HandlerFailure) throw error.cause;
        if (error instanceof MailboxError && !options.signal?.aborted) errors.push(error);
        else throw error;
      }
    }
    return { messages, rejected, errors, more };
  }

  /**
   * Watches every relay of this identity over its event stream (`GET /ohan/v1/events/stream`,
   * resuming from the cursor with `Last-Event-ID`) and hands each new message to `onMessage`,
   * as `fetch` would. Resolves once every stream has opened or failed its first attempt.
   */
  async watch(options: WatchOptions): Promise<MailboxWatch> {
    const relays = await this.relays();
    return startWatch(
      relays.map((relay) => this.#client(relay)),
      options,
      { intake: this.#intake, lock: this.#lock, maxEventBytes: this.#maxEventBytes },
    );
  }

  async #allowList(options: CallOptions = {}): Promise<string[]> {
    const relays = await this.relays();
    const lists = await Promise.allSettled(relays.map((r) => this.#client(r).getAllow(options.signal)));
    const answered = lists.filter((l): l is PromiseFulfilledResult<string[]> => l.status === 'fulfilled');
    if (answered.length === 0) throw (lists[0] as PromiseRejectedResult).reason;
    return [...new Set(answered.flatMap((l) => l.value))].sort();
  }

  async #allowChange(
    keys: readonly string[],
    change: 'add' | 'remove',
    options: CallOptions = {},
  ): Promise<AllowOutcome[]> {
    const wanted = keys.map(signingKeyOf);
    const relays = await this.relays();
    return Promise.all(
      relays.map(async (relay): Promise<AllowOutcome> => {
        const client = this.#client(relay);
        try {
          const current = await client.getAllow(options.signal);
          const next =
            change === 'add'
              ? [...new Set([...current, ...wanted])]
              : current.filter((contact) => !wanted.includes(contact));
          return { relay, ok: true, contacts: await client.putAllow(next, options.signal) };
        } catch (error) {
          if (error instanceof MailboxError) return { relay, ok: false, error };
          throw error;
        }
      }),
    );
  }

  /** The highest card stamp strength of the directory boxes among `relays` (an unreachable one counts 0). */
  async #cardStampBits(relays: readonly string[], signal?: AbortSignal): Promise<number> {
    const limits = await Promise.all(
      relays.map((relay) => this.#limitsOf(this.#client(relay), signal).catch(() => undefined)),
    );
    return Math.max(0, ...limits.map((l) => (l?.directory ? l.cardStampBits : 0)));
  }

  async #limitsOf(client: BoxClient, signal?: AbortSignal): Promise<BoxLimitsInfo> {
    const cached = this.#limits.get(client.origin);
    if (cached && this.#now() - cached.at < LIMITS_TTL_MS) return cached.limits;
    const limits = await client.limits(signal);
    this.#limits.set(client.origin, { limits, at: this.#now() });
    return limits;
  }

  #client(relay: string): BoxClient {
    let client = this.#clients.get(relay);
    if (client === undefined) {
      if (!isBoxOrigin(relay)) throw new MailboxError('invalid_card', { relay, reason: 'relays' });
      client = new BoxClient({
        origin: relay,
        signer: this.identity.keypair,
        fetch: this.#fetch,
        timeoutMs: this.#options.timeoutMs ?? 15_000,
        maxEventBytes: this.#maxEventBytes,
        now: this.#now,
      });
      this.#clients.set(relay, client);
    }
    return client;
  }
}

/** 1..16 distinct box origins (`https://host[:port]`, `http://` on loopback), as a card needs. */
function checkRelays(relays: readonly string[]): void {
  if (
    !Array.isArray(relays) ||
    relays.length === 0 ||
    relays.length > 16 ||
    new Set(relays).size !== relays.length ||
    !relays.every(isBoxOrigin)
  ) {
    throw new MailboxError('invalid_card', { reason: 'relays' });
  }
}
