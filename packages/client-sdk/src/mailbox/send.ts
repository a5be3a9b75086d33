import {
  createEvent,
  DEFAULT_TTL_SECONDS,
  type MintProgress,
  type OhanCard,
  type OhanEvent,
  OhanSealError,
  verifyCard,
} from '@wmp/ohan-seal';
import type { Identity } from '../identity/identity.js';
import type { BoxClient } from './box-client.js';
import type { BoxLimitsInfo } from './box-limits.js';
import { MailboxError } from './errors.js';
import type { PublishOutcome } from './outcomes.js';

export interface SendOptions {
  /**
   * You are on the recipient's allow list: publish without a stamp, and mint one only for the
   * boxes that answer `stamp_required`. Default false: one event stamped at the highest
   * `stranger_bits` among the recipient's boxes, which every box takes.
   */
  readonly asContact?: boolean;
  /** Lifetime of the event (default 7 days), lowered to the boxes' `max_ttl_seconds`. */
  readonly ttlSeconds?: number;
  /** Cancels stamp mining and the requests; the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Stamp mining progress, every 65 536 tries. */
  readonly onProgress?: (progress: MintProgress) => void;
}

export interface SendResult {
  /** One per relay on the recipient's card, in the card's order. */
  readonly outcomes: readonly PublishOutcome[];
  /** True when at least one box holds the message. */
  readonly accepted: boolean;
}

/** Someone to send to: their card, or a record holding it. */
export type Recipient = OhanCard | { readonly card: OhanCard };

export interface SendContext {
  readonly identity: Identity;
  readonly now: () => number;
  readonly maxStampBits: number;
  client(relay: string): BoxClient;
  limits(client: BoxClient, signal?: AbortSignal): Promise<BoxLimitsInfo>;
  publish(event: OhanEvent, relays: readonly string[], signal?: AbortSignal): Promise<PublishOutcome[]>;
}

type Reachable = { readonly relay: string; readonly limits: BoxLimitsInfo };

function failed(relay: string, error: unknown): PublishOutcome {
  if (!(error instanceof MailboxError)) throw error;
  return { relay, ok: false, error };
}

function checkSender(envelope: object, did: string): void {
  const params = (envelope as { params?: unknown }).params;
  const wmp = params !== null && typeof params === 'object' ? (params as { wmp?: unknown }).wmp : undefined;
  const sender = wmp !== null && typeof wmp === 'object' ? (wmp as { sender?: unknown }).sender : undefined;
  // The recipient refuses an envelope whose sender is not the event's signer: refuse it here first.
  if (sender !== undefined && sender !== did) throw new MailboxError('invalid_envelope', { reason: 'sender' });
}

/**
 * Seals `envelope` to the recipient's card and publishes it to every relay on the card: reads
 * each box's limits, mints one stamp for the strictest box (or none, for a contact), publishes
 * the same event everywhere (so the recipient deduplicates it by id), and reports per relay.
 */
export async function sendSealed(
  recipient: Recipient,
  envelope: object,
  options: SendOptions,
  ctx: SendContext,
): Promise<SendResult> {
  const card = 'card' in recipient && !('protocol' in recipient) ? recipient.card : (recipient as OhanCard);
  const verdict = verifyCard(card);
  if (!verdict.ok) throw new MailboxError('invalid_card', { reason: verdict.reason });
  if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope)) {
    throw new MailboxError('invalid_envelope');
  }
  checkSender(envelope, ctx.identity.did);
  const { signal } = options;
  if (options.ttlSeconds !== undefined && !(Number.isSafeInteger(options.ttlSeconds) && options.ttlSeconds > 0)) {
    throw new RangeError('ttlSeconds must be a positive integer');
  }

  const outcomes = new Map<string, PublishOutcome>();
  const reachable: Reachable[] = [];
  await Promise.all(
    card.relays.map(async (relay) => {
      try {
        reachable.push({ relay, limits: await ctx.limits(ctx.client(relay), signal) });
      } catch (error) {
        outcomes.set(relay, failed(relay, error));
      }
    }),
  );
  const affordable = reachable.filter(({ relay, limits }) => {
    if (options.asContact || limits.strangerBits <= ctx.maxStampBits) return true;
    outcomes.set(relay, failed(relay, new MailboxError('stamp_too_costly', { relay })));
    return false;
  });

  if (affordable.length > 0) {
    const ts = ctx.now();
    const ttl = Math.min(options.ttlSeconds ?? DEFAULT_TTL_SECONDS, ...affordable.map((r) => r.limits.maxTtlSeconds));
    const maxEventBytes = Math.min(...affordable.map((r) => r.limits.maxEventBytes));
    const seal = (bits: number) =>
      makeEvent(envelope, card, ctx, {
        ts,
        exp: ts + ttl * 1000,
        bits,
        maxEventBytes,
        ...(signal ? { signal } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      });

    const strictest = (set: readonly Reachable[]) => Math.max(0, ...set.map((r) => r.limits.strangerBits));
    const first = await seal(options.asContact ? 0 : strictest(affordable));
    const published = await ctx.publish(
      first,
      affordable.map((r) => r.relay),
      signal,
    );
    for (const outcome of published) outcomes.set(outcome.relay, outcome);

    // A contact's unstamped event refused as a stranger's: stamp a second event for those boxes only.
    const refused = options.asContact
      ? affordable.filter((r) => {
          const o = outcomes.get(r.relay);
          return o && !o.ok && o.error.code === 'stamp_required';
        })
      : [];
    const payable = refused.filter(({ relay, limits }) => {
      if (limits.strangerBits <= ctx.maxStampBits) return true;
      outcomes.set(relay, failed(relay, new MailboxError('stamp_too_costly', { relay })));
      return false;
    });
    if (payable.length > 0) {
      const second = await seal(strictest(payable));
      for (const outcome of await ctx.publish(
        second,
        payable.map((r) => r.relay),
        signal,
      )) {
        outcomes.set(outcome.relay, outcome);
      }
    }
  }
  const ordered = card.relays.map((relay) => outcomes.get(relay)!);
  return { outcomes: ordered, accepted: ordered.some((o) => o.ok) };
}

interface SealInput {
  readonly ts: number;
  readonly exp: number;
  readonly bits: number;
  readonly maxEventBytes: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: MintProgress) => void;
}

async function makeEvent(envelope: object, card: OhanCard, ctx: SendContext, input: SealInput): Promise<OhanEvent> {
  try {
    return await createEvent({
      envelope,
      to: card,
      from: ctx.identity.keypair,
      ts: new Date(input.ts),
      exp: new Date(input.exp),
      maxEventBytes: input.maxEventBytes,
      ...(input.bits > 0 ? { stampBits: input.bits } : {}),
      ...(input.signal === undefined ? {} : { signal: input.signal }),
      ...(input.onProgress === undefined ? {} : { onProgress: input.onProgress }),
    });
  } catch (error) {
    if (error instanceof OhanSealError) {
      if (error.reason === 'too_large') throw new MailboxError('too_large');
      if (error.reason === 'envelope') throw new MailboxError('invalid_envelope');
    }
    throw error;
  }
}
