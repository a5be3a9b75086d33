import { base58, base64 } from '@scure/base';

const UTC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** Parses an RFC 3339 UTC time ending in `Z` (fractional seconds allowed); `undefined` otherwise. */
export function parseUtcTime(text: unknown): number | undefined {
  if (typeof text !== 'string' || !UTC_TIME.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Standard base64 with padding (the event payload); strict: throws on anything else. */
export const b64 = { encode: (b: Uint8Array) => base64.encode(b), decode: (s: string) => base64.decode(s) };

/** `z` + base58btc: how signatures are written on events and cards. */
export function encodeMultibase(bytes: Uint8Array): string {
  return `z${base58.encode(bytes)}`;
}

/** Decodes `z` + base58btc of exactly `length` bytes; `undefined` when malformed. */
export function decodeMultibase(text: unknown, length: number): Uint8Array | undefined {
  if (typeof text !== 'string' || text.length > 2 * length || text[0] !== 'z') return undefined;
  try {
    const bytes = base58.decode(text.slice(1));
    return bytes.length === length ? bytes : undefined;
  } catch {
    return undefined;
  }
}

const HEX = /^[0-9a-f]*$/;

/** Lowercase hex; `undefined` when `text` is not exactly that. */
export function decodeLowerHex(text: unknown, bytes: number): Uint8Array | undefined {
  if (typeof text !== 'string' || text.length !== bytes * 2 || !HEX.test(text)) return undefined;
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const HEX_PAIRS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function lowerHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += HEX_PAIRS[b];
  return s;
}
