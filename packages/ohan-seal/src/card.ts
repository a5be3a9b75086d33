import {
  decodeEd25519Multikey,
  decodeX25519Multikey,
  encodeEd25519Multikey,
  jcs,
  type Signer,
  utf8,
  verifyEd25519,
} from '@wmp/jcs-signing';
import { isLoopbackHost, rfc3339 } from '@wmp/jsonrpc-envelope';
import { backend } from '#crypto';
import { decodeMultibase, encodeMultibase, parseUtcTime } from './encoding.js';
import { isStamp, type Stamp } from './event.js';
import { CARD_PROTOCOL, MAX_CARD_RELAYS } from './profile.js';
import { leadingZeroBits, type MintOptions, mintStampFor } from './stamp.js';

/** `ohan.card.1`: who someone is (signing key), how to seal to them (enc) and where their boxes are. */
export interface OhanCard {
  readonly protocol: typeof CARD_PROTOCOL;
  /** Ed25519 Multikey. */
  readonly key: string;
  /** X25519 Multikey. */
  readonly enc: string;
  /** Box origins: https, or http on loopback only. */
  readonly relays: readonly string[];
  /**
   * Proof of work (ours): SHA-256 of JCS(the card without `signature`) has `bits` leading zero
   * bits. A box asks it of a key it has never seen, at its stranger strength, so that cards from
   * fresh keys cost what a stranger's event does.
   */
  readonly stamp?: Stamp;
  readonly ts: string;
  readonly signature: string;
}

export interface CreateCardInput {
  readonly signer: Signer;
  /** X25519 Multikey of the encryption key (`z6LS...`). */
  readonly enc: string;
  readonly relays: readonly string[];
  readonly ts?: Date | string;
  /** Mint a stamp of this strength (the strictest `stranger_bits` of the card's boxes). */
  readonly stampBits?: number;
  readonly mint?: MintOptions;
}

/** A box origin: `https://host[:port]` (no path, query or credentials), or `http://` on loopback. */
export function isBoxOrigin(text: unknown): text is string {
  if (typeof text !== 'string' || text.length > 512) return false;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.origin !== text) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

function cardShapeOk(v: Record<string, unknown>): boolean {
  const keys = Object.keys(v).sort().join(',');
  const stamped = keys === 'enc,key,protocol,relays,signature,stamp,ts';
  if (keys !== 'enc,key,protocol,relays,signature,ts' && !stamped) return false;
  if (stamped && !isStamp(v.stamp)) return false;
  if (v.protocol !== CARD_PROTOCOL || parseUtcTime(v.ts) === undefined) return false;
  if (!Array.isArray(v.relays) || v.relays.length === 0 || v.relays.length > MAX_CARD_RELAYS) return false;
  if (!v.relays.every(isBoxOrigin) || new Set(v.relays).size !== v.relays.length) return false;
  try {
    decodeEd25519Multikey(v.key as string);
    decodeX25519Multikey(v.enc as string);
  } catch {
    return false;
  }
  return true;
}

/** Creates and signs a card: signature = z + base58btc(Ed25519 over JCS of the card without it). */
export async function createCard(input: CreateCardInput): Promise<OhanCard> {
  const base = {
    protocol: CARD_PROTOCOL,
    key: encodeEd25519Multikey(input.signer.publicKey),
    enc: input.enc,
    relays: [...input.relays],
    ts: typeof input.ts === 'string' ? input.ts : rfc3339((input.ts ?? new Date()).getTime()),
  } as const;
  const unsigned =
    input.stampBits === undefined || input.stampBits === 0
      ? base
      : { ...base, stamp: await mintStampFor((stamp) => jcs({ ...base, stamp }), input.stampBits, input.mint) };
  const signature = encodeMultibase(await input.signer.sign(utf8(jcs(unsigned))));
  const card = { ...unsigned, signature };
  if (!cardShapeOk(card)) throw new TypeError('invalid card fields');
  return card;
}

export type CardVerdict =
  | { readonly ok: true; readonly card: OhanCard }
  | { readonly ok: false; readonly reason: 'shape' | 'signature' | 'stamp' };

/** Checks a card's exact shape, keys, relay origins and signature by its own `key`. Never throws. */
export function verifyCard(value: unknown): CardVerdict {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'shape' };
  const v = value as Record<string, unknown>;
  if (!cardShapeOk(v)) return { ok: false, reason: 'shape' };
  const { signature: sig, ...unsigned } = v;
  const signature = decodeMultibase(sig, 64);
  if (!signature) return { ok: false, reason: 'signature' };
  const text = utf8(jcs(unsigned));
  if (!verifyEd25519(decodeEd25519Multikey(v.key as string), text, signature)) {
    return { ok: false, reason: 'signature' };
  }
  if (isStamp(v.stamp) && leadingZeroBits(backend.sha256(text)) < v.stamp.bits) return { ok: false, reason: 'stamp' };
  return { ok: true, card: v as unknown as OhanCard };
}

/** The committed strength of a verified card's stamp, 0 without one. */
export function cardStampStrength(card: OhanCard): number {
  return card.stamp?.bits ?? 0;
}

/** True when `candidate` should replace `current`: same key, strictly newer `ts`. */
export function isNewerCard(candidate: OhanCard, current: OhanCard): boolean {
  return candidate.key === current.key && parseUtcTime(candidate.ts)! > parseUtcTime(current.ts)!;
}
