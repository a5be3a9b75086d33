import { readFileSync } from 'node:fs';

/** The OHAN vectors (vectors/ohan/ohan-vectors.json): see vectors/README.md. */
export const V = JSON.parse(readFileSync(new URL('../../../vectors/ohan/ohan-vectors.json', import.meta.url), 'utf8'));
export const NOW = Date.parse(V.now);

export function hex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, 'hex'));
}
