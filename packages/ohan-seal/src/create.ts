import { decodeEd25519Multikey, encodeEd25519Multikey, jcs, type Signer, utf8 } from '@wmp/jcs-signing';
import { parseSingleMessage, rfc3339 } from '@wmp/jsonrpc-envelope';
import { backend } from '#crypto';
import { encodeMultibase, parseUtcTime } from './encoding.js';
import { OhanSealError } from './errors.js';
import { idPreimage, type OhanEvent, signedText, type UnsignedEvent } from './event.js';
import {
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_TTL_SECONDS,
  EVENT_KIND,
  EVENT_PROTOCOL,
  MAX_TTL_SECONDS,
  SEAL_SUITE,
} from './profile.js';
import { type SealRandomness, type SealRecipient, sealEnvelope } from './seal.js';
import { type MintOptions, mintStamp } from './stamp.js';

export interface CreateEventInput extends MintOptions {
  /** A JSON-RPC message (written as JCS) or its JSON text (sealed as given, after checking it is one message). */
  readonly envelope: object | string;
  /** The recipient: its card, or `{ key, enc }` Multikeys. */
  readonly to: SealRecipient;
  /** The sender's Ed25519 signer (`from_key` is its public key). */
  readonly from: Signer;
  readonly ts?: Date | string;
  /** Default: `ts` + 7 days. At most 30 days ahead. */
  readonly exp?: Date | string;
  /** Mint a stamp of this many bits (a box's `stranger_bits` for strangers). */
  readonly stampBits?: number;
  readonly maxEventBytes?: number;
  /** Fixed ephemeral key and nonce: only for reproducing vectors. */
  readonly randomness?: SealRandomness;
}

/** Upper bound of what `stamp`, `id` and `signature` add to an event's JSON. */
const MAX_SIGNED_OVERHEAD = 320;

function toMs(t: Date | string): number {
  const ms = t instanceof Date ? t.getTime() : parseUtcTime(t);
  if (ms === undefined || Number.isNaN(ms)) throw new OhanSealError('time');
  return ms;
}

function envelopeBytes(envelope: object | string): Uint8Array {
  try {
    if (typeof envelope === 'string') {
      parseSingleMessage(envelope);
      return utf8(envelope);
    }
    return utf8(jcs(parseSingleMessage(JSON.stringify(envelope))));
  } catch {
    throw new OhanSealError('envelope');
  }
}

/** Signs an unsigned event: `id` = SHA-256 of its JCS, `signature` by `from` over JCS with the id. */
export async function signEvent(event: UnsignedEvent, from: Signer): Promise<OhanEvent> {
  const preimage = idPreimage(event);
  const id = backend.sha256Hex(preimage);
  const signature = await from.sign(utf8(signedText(preimage, id)));
  return { ...event, id, signature: encodeMultibase(signature) };
}

/**
 * Seals a WMP envelope into an `ohan.event.1` for `to`: pads and encrypts it (docs/ohan-profile.md,
 * "The seal"), stamps it when `stampBits` is given, computes the id and signs it. Throws
 * `OhanSealError`.
 */
export async function createEvent(input: CreateEventInput): Promise<OhanEvent> {
  try {
    decodeEd25519Multikey(input.to.key);
  } catch {
    throw new OhanSealError('key');
  }
  const tsMs = input.ts === undefined ? Date.now() : toMs(input.ts);
  const expMs = input.exp === undefined ? tsMs + DEFAULT_TTL_SECONDS * 1000 : toMs(input.exp);
  if (expMs <= tsMs || expMs - tsMs > MAX_TTL_SECONDS * 1000) throw new OhanSealError('time');

  const { epk, payload } = sealEnvelope(envelopeBytes(input.envelope), input.to, input.randomness);
  let event: UnsignedEvent = {
    protocol: EVENT_PROTOCOL,
    seal: SEAL_SUITE,
    to: input.to.key,
    epk,
    ts: rfc3339(tsMs),
    exp: rfc3339(expMs),
    kind: EVENT_KIND,
    from_key: encodeEd25519Multikey(input.from.publicKey),
    payload,
  };
  // The size is known before mining (the stamp, id and signature add at most ~300 bytes):
  // refuse early rather than after burning the work.
  if (JSON.stringify(event).length + MAX_SIGNED_OVERHEAD > (input.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES)) {
    throw new OhanSealError('too_large');
  }
  if (input.stampBits !== undefined) event = await mintStamp(event, input.stampBits, input);
  return signEvent(event, input.from);
}
