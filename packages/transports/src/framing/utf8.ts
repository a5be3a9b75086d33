import { InvalidUtf8Error } from './errors.js';

// Strict: a frame with a bad byte sequence is an error, never silently patched with U+FFFD,
// since the text may carry signed content. A BOM is kept, for the JSON parser to refuse.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new InvalidUtf8Error();
  }
}

export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}
