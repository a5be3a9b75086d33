import { decodeEd25519Multikey, jcs } from '@wmp/jcs-signing';
import { backend } from '#crypto';
import { parseUtcTime } from './encoding.js';
import { EVENT_KIND, EVENT_PROTOCOL, MAX_STAMP_BITS, SEAL_SUITE } from './profile.js';

/** Proof of work on the event id (docs/ohan-profile.md, "The stamp"). */
export interface Stamp {
  readonly bits: number;
  readonly nonce: string;
}

/** An event before it has an id and a signature. */
export interface UnsignedEvent {
  readonly protocol: typeof EVENT_PROTOCOL;
  readonly seal: typeof SEAL_SUITE;
  /** The recipient's Ed25519 Multikey: queues are addressed and authorised by it. */
  readonly to: string;
  /** The ephemeral X25519 public key, 64 lowercase hex characters. */
  readonly epk: string;
  readonly ts: string;
  readonly exp: string;
  readonly kind: typeof EVENT_KIND;
  /** The sender's Ed25519 Multikey. */
  readonly from_key: string;
  readonly stamp?: Stamp;
  /** base64(nonce(12) || tag(16) || ciphertext). */
  readonly payload: string;
}

/** `ohan.event.1`: sealed, identified by the hash of its JCS, signed by `from_key`. */
export interface OhanEvent extends UnsignedEvent {
  readonly id: string;
  readonly signature: string;
}

/** An event as a box serves it: with its position in the recipient's queue (outside the signed bytes). */
export interface StoredEvent extends OhanEvent {
  readonly seq: number;
}

const REQUIRED = ['protocol', 'seal', 'to', 'epk', 'ts', 'exp', 'kind', 'from_key', 'payload', 'id', 'signature'];
const ALLOWED = new Set([...REQUIRED, 'stamp', 'seq']);
const STAMP_NONCE = /^[0-9A-Za-z_-]{1,64}$/;
const ID = /^[0-9a-f]{64}$/;
const EPK = ID;
const MULTIBASE = /^z[1-9A-HJ-NP-Za-km-z]{1,128}$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isEd25519Key(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  try {
    decodeEd25519Multikey(v);
    return true;
  } catch {
    return false;
  }
}

export function isStamp(v: unknown): v is Stamp {
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  return (
    keys.length === 2 &&
    Number.isSafeInteger(v.bits) &&
    (v.bits as number) >= 0 &&
    (v.bits as number) <= MAX_STAMP_BITS &&
    typeof v.nonce === 'string' &&
    STAMP_NONCE.test(v.nonce)
  );
}

/**
 * The exact shape of docs/ohan-profile.md, "The event": every field present and well formed, no
 * other field (a box's `seq` is tolerated and dropped), keys that decode to strong Ed25519 keys.
 * Returns the event without `seq`, or `undefined`.
 */
export function checkEventShape(value: unknown): OhanEvent | undefined {
  return checkShapeAndTimes(value)?.event;
}

/** `checkEventShape`, also returning the parsed `ts` and `exp` (ms) so verification parses them once. */
export function checkShapeAndTimes(value: unknown): { event: OhanEvent; ts: number; exp: number } | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const key of Object.keys(value)) if (!ALLOWED.has(key)) return undefined;
  for (const key of REQUIRED) if (!(key in value)) return undefined;
  const v = value;
  if (v.protocol !== EVENT_PROTOCOL || v.seal !== SEAL_SUITE || v.kind !== EVENT_KIND) return undefined;
  if (typeof v.epk !== 'string' || !EPK.test(v.epk)) return undefined;
  const ts = parseUtcTime(v.ts);
  const exp = parseUtcTime(v.exp);
  if (ts === undefined || exp === undefined) return undefined;
  if (typeof v.payload !== 'string' || !backend.isBase64(v.payload)) return undefined;
  if (typeof v.id !== 'string' || !ID.test(v.id)) return undefined;
  if (typeof v.signature !== 'string' || !MULTIBASE.test(v.signature)) return undefined;
  if ('stamp' in v && !isStamp(v.stamp)) return undefined;
  if ('seq' in v && !Number.isSafeInteger(v.seq)) return undefined;
  if (!isEd25519Key(v.to) || !isEd25519Key(v.from_key)) return undefined;
  if (!('seq' in v)) return { event: v as unknown as OhanEvent, ts, exp };
  const { seq: _seq, ...event } = v;
  return { event: event as unknown as OhanEvent, ts, exp };
}

/** The event without `id`, `signature` and `seq`: what the id is the hash of. */
export function unsignedPart(event: UnsignedEvent | OhanEvent): UnsignedEvent {
  const { id: _id, signature: _signature, seq: _seq, ...rest } = event as OhanEvent & { seq?: number };
  return rest;
}

/**
 * RFC 8785 JCS of a shape-checked event's unsigned part, written directly: every value of a valid
 * event is an ASCII string that JSON writes without escapes (or the stamp's small integer), and
 * the keys are fixed, so this is the canonical form at a fraction of a generic canonicalizer's
 * cost. Only for events that passed `checkEventShape` (tests compare it with `idPreimage`).
 */
export function validEventPreimage(e: OhanEvent): string {
  const stamp = e.stamp ? `"stamp":{"bits":${e.stamp.bits},"nonce":"${e.stamp.nonce}"},` : '';
  return (
    `{"epk":"${e.epk}","exp":"${e.exp}","from_key":"${e.from_key}","kind":"${e.kind}","payload":"${e.payload}",` +
    `"protocol":"${e.protocol}","seal":"${e.seal}",${stamp}"to":"${e.to}","ts":"${e.ts}"}`
  );
}

/** JCS of the unsigned part: the id preimage. */
export function idPreimage(event: UnsignedEvent | OhanEvent): string {
  return jcs(unsignedPart(event));
}

/**
 * JCS of the event without `signature`, built from the id preimage: "id" sorts between
 * "from_key" and "kind", so it is spliced in rather than canonicalizing a second time.
 */
export function signedText(preimage: string, id: string): string {
  const at = preimage.indexOf(',"kind":');
  if (at < 0) throw new TypeError('not an event preimage');
  return `${preimage.slice(0, at)},"id":"${id}"${preimage.slice(at)}`;
}
