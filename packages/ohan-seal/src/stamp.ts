import { utf8 } from '@wmp/jcs-signing';
import { idPreimage, isStamp, type Stamp, type UnsignedEvent } from './event.js';
import { MAX_STAMP_BITS } from './profile.js';
import { StampHasher } from './stamp-hash.js';

/** Leading zero bits of a hash (big-endian bit order). */
export function leadingZeroBits(hash: Uint8Array): number {
  let n = 0;
  for (const byte of hash) {
    if (byte !== 0) return n + Math.clz32(byte) - 24;
    n += 8;
  }
  return n;
}

/** Leading zero bits of a hash written as lowercase hex. */
export function leadingZeroBitsOfHex(hex: string): number {
  let n = 0;
  for (let i = 0; i < hex.length; i++) {
    const nibble = Number.parseInt(hex[i]!, 16);
    if (nibble !== 0) return n + Math.clz32(nibble) - 28;
    n += 4;
  }
  return n;
}

/** The committed strength of an event's stamp (its `bits`), 0 without one. Validity is `verifyEvent`'s job. */
export function stampStrength(event: { readonly stamp?: unknown }): number {
  return isStamp(event.stamp) ? event.stamp.bits : 0;
}

export interface MintProgress {
  readonly tries: number;
  /** 2^bits: the mean number of tries for this strength. */
  readonly expectedTries: number;
}

export interface MintOptions {
  readonly signal?: AbortSignal;
  /** Called every 64k tries, so a CLI can show progress. */
  readonly onProgress?: (progress: MintProgress) => void;
}

const SENTINEL = 'N0NCE';
const NONCE_KEY = '"nonce":"';
/** 64 symbols of the nonce alphabet [0-9A-Za-z_-]; 11 of them give 66 bits, beyond any feasible stamp. */
const ALPHABET = utf8('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_');
const NONCE_LENGTH = 11;
/** Mining yields to the event loop this often, so an abort (or anything else) can run. */
const SLICE_MS = 25;
const BATCH = 4096;

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('stamp mining aborted', 'AbortError');
}

/**
 * Mints a stamp of `bits` on an unsigned event (NIP-13 style: the id itself must have `bits`
 * leading zero bits, and the stamp is inside the id's preimage). JCS puts `payload` before `stamp`,
 * so everything up to the nonce is hashed once and each try hashes only the rest (see
 * stamp-hash.ts). Returns the event with `stamp` set; cancellable with `signal`.
 */
export async function mintStamp(event: UnsignedEvent, bits: number, options: MintOptions = {}): Promise<UnsignedEvent> {
  checkBits(bits);
  const text = idPreimage({ ...event, stamp: { bits, nonce: SENTINEL } });
  return { ...event, stamp: { bits, nonce: await mintNonce(text, bits, options) } };
}

/**
 * The stamp of `bits` for an object whose JCS text (with `stamp: {bits, nonce}` inside) is what
 * the proof of work hashes: a card's (docs/ohan-profile.md, "The card": a box may ask
 * it of a new key's card). `preimage` writes that text for a given stamp.
 */
export async function mintStampFor(
  preimage: (stamp: Stamp) => string,
  bits: number,
  options: MintOptions = {},
): Promise<Stamp> {
  checkBits(bits);
  return { bits, nonce: await mintNonce(preimage({ bits, nonce: SENTINEL }), bits, options) };
}

function checkBits(bits: number): void {
  if (!Number.isSafeInteger(bits) || bits < 0 || bits > MAX_STAMP_BITS) throw new RangeError('bits must be 0..255');
}

/** Varies the sentinel nonce in `text` until SHA-256 of the text has `bits` leading zero bits. */
async function mintNonce(text: string, bits: number, options: MintOptions): Promise<string> {
  const at = text.indexOf(`${NONCE_KEY}${SENTINEL}"`);
  if (at < 0) throw new TypeError('no stamp to mint');
  const hasher = new StampHasher(
    utf8(text.slice(0, at + NONCE_KEY.length)),
    NONCE_LENGTH,
    utf8(text.slice(at + NONCE_KEY.length + SENTINEL.length)),
  );
  // An odometer over the alphabet, written straight into the hasher's buffer.
  const digits = new Uint8Array(NONCE_LENGTH);
  const { tail, nonceOffset } = hasher;
  tail.fill(ALPHABET[0]!, nonceOffset, nonceOffset + NONCE_LENGTH);
  const { signal, onProgress } = options;
  const expectedTries = 2 ** bits;
  let tries = 0;
  let sliceEnd = performance.now() + SLICE_MS;
  for (;;) {
    if (signal?.aborted) throw abortReason(signal);
    for (let i = 0; i < BATCH; i++) {
      if (hasher.leadingZeroBits() >= bits) {
        return new TextDecoder().decode(tail.subarray(nonceOffset, nonceOffset + NONCE_LENGTH));
      }
      let d = NONCE_LENGTH - 1;
      while (d >= 0 && digits[d] === 63) {
        digits[d] = 0;
        tail[nonceOffset + d] = ALPHABET[0]!;
        d--;
      }
      if (d < 0) throw new RangeError('nonce space exhausted');
      digits[d]! += 1;
      tail[nonceOffset + d] = ALPHABET[digits[d]!]!;
    }
    tries += BATCH;
    if ((tries & 0xffff) === 0) onProgress?.({ tries, expectedTries });
    if (performance.now() >= sliceEnd) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
}
