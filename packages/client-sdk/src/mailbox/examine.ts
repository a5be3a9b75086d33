import { decodeEd25519Multikey, didKeyFromPublicKey, jcs, sha256, toHex, utf8 } from '@wmp/jcs-signing';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import {
  type EventFailure,
  type OhanEvent,
  OhanOpenError,
  type OpenFailure,
  openEvent,
  parseUtcTime,
  verifyEvent,
} from '@wmp/ohan-seal';
import type { Identity } from '../identity/identity.js';
import type { SeenSet } from './seen-set.js';

/**
 * Why a served event was not handed to the application: a check of `verifyEvent` (shape, id,
 * signature, stamp, time, too_large), of `openEvent` (decrypt, small_order, padding, envelope),
 * or of the mailbox: addressed to another key (`misaddressed`), or an envelope naming another
 * sender than the event's signer (`sender_mismatch`).
 */
export type RejectReason = EventFailure | OpenFailure | 'misaddressed' | 'sender_mismatch';

/** A sealed message, opened and verified. */
export interface MailMessage {
  /** The WMP message, parsed strictly. */
  readonly envelope: JsonRpcMessage;
  /** The event's id (the same on every relay it was published to). */
  readonly eventId: string;
  /** did:key of the signer (`from_key`). */
  readonly from: string;
  /** The signer's Ed25519 Multikey. */
  readonly fromKey: string;
  /** The box it was fetched from. */
  readonly relay: string;
  /** When the sender made it (the event's `ts`). */
  readonly ts: string;
}

/** A served event that was refused, and why. */
export interface RejectedEvent {
  readonly relay: string;
  /** The event's claimed id, when it has one that looks like an id. */
  readonly eventId?: string;
  readonly reason: RejectReason;
}

export type Examined =
  | {
      readonly kind: 'accept';
      readonly message: MailMessage;
      readonly seenKeys: readonly string[];
      readonly exp: number;
    }
  | { readonly kind: 'duplicate'; readonly eventId: string; readonly seenKeys: readonly string[]; readonly exp: number }
  | { readonly kind: 'reject'; readonly rejected: RejectedEvent };

export interface ExamineContext {
  readonly identity: Identity;
  readonly seen: SeenSet;
  readonly relay: string;
  readonly now: number;
  readonly skewSeconds: number;
  readonly maxEventBytes: number;
}

const ID = /^[0-9a-f]{64}$/;

/** Dedupe keys are 128-bit prefixes: half the size in the store, and still no chance collision. */
const SEEN_KEY_HEX = 32;

export function eventSeenKey(eventId: string): string {
  return eventId.slice(0, SEEN_KEY_HEX);
}

/**
 * The key of an envelope for deduplication: its sender and JSON-RPC id (request or response
 * side), else its `wmp.message_id`; `undefined` for a notification without either.
 */
export function envelopeSeenKey(fromKey: string, message: JsonRpcMessage): string | undefined {
  let ref: unknown[] | undefined;
  if ('id' in message && (typeof message.id === 'string' || typeof message.id === 'number')) {
    ref = ['method' in message ? 'request' : 'response', message.id];
  } else {
    const messageId = wmpField(message, 'message_id');
    if (typeof messageId === 'string') ref = ['message', messageId];
  }
  if (ref === undefined) return undefined;
  return `e${toHex(sha256(utf8(jcs([fromKey, ...ref])))).slice(0, SEEN_KEY_HEX)}`;
}

function wmpField(message: JsonRpcMessage, name: string): unknown {
  const params = 'params' in message ? message.params : undefined;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return undefined;
  const wmp = (params as Record<string, unknown>).wmp;
  if (wmp === null || typeof wmp !== 'object' || Array.isArray(wmp)) return undefined;
  return (wmp as Record<string, unknown>)[name];
}

function claimedId(value: unknown): string | undefined {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' && ID.test(id) ? id : undefined;
}

/**
 * Everything the recipient checks before handing a served event over: the box's checks again
 * (a box can be wrong or hostile), the address, the seal, the envelope's sender, and whether
 * this event or this envelope was handed over before. Never throws.
 */
export function examineEvent(value: unknown, ctx: ExamineContext): Examined {
  const reject = (reason: RejectReason, eventId = claimedId(value)): Examined => ({
    kind: 'reject',
    rejected: { relay: ctx.relay, ...(eventId === undefined ? {} : { eventId }), reason },
  });
  const verdict = verifyEvent(value, {
    now: ctx.now,
    skewSeconds: ctx.skewSeconds,
    maxEventBytes: ctx.maxEventBytes,
  });
  if (!verdict.ok) return reject(verdict.reason);
  const event = value as OhanEvent;
  if (event.to !== ctx.identity.signingKey) return reject('misaddressed', event.id);
  const exp = parseUtcTime(event.exp)!;
  const eventKey = eventSeenKey(event.id);
  if (ctx.seen.has(eventKey)) return { kind: 'duplicate', eventId: event.id, seenKeys: [], exp };

  let message: JsonRpcMessage;
  try {
    message = openEvent(event, ctx.identity.encKeypair.secretKey).message;
  } catch (error) {
    return reject(error instanceof OhanOpenError ? error.reason : 'decrypt', event.id);
  }
  const from = didKeyFromPublicKey(decodeEd25519Multikey(event.from_key));
  // The signature binds `from_key`; an envelope claiming another sender would be a forgery.
  const sender = wmpField(message, 'sender');
  if (sender !== undefined && sender !== from) return reject('sender_mismatch', event.id);

  const envelopeKey = envelopeSeenKey(event.from_key, message);
  if (envelopeKey !== undefined && ctx.seen.has(envelopeKey)) {
    return { kind: 'duplicate', eventId: event.id, seenKeys: [eventKey], exp };
  }
  return {
    kind: 'accept',
    message: { envelope: message, eventId: event.id, from, fromKey: event.from_key, relay: ctx.relay, ts: event.ts },
    seenKeys: envelopeKey === undefined ? [eventKey] : [eventKey, envelopeKey],
    exp,
  };
}
