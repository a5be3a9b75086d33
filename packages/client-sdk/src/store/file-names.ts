// How FileStore names files after keys: readable, reversible, safe on case-insensitive file
// systems, and never longer than a file name may be.

/** Longest file name we write for a key; past it the name is a hash. Most systems allow 255 bytes. */
const MAX_NAME_LENGTH = 200;
/** Written as themselves; every other byte is `%XX`. Upper case letters are escaped too, so two keys that differ only by case never share a file on macOS or Windows. */
const LITERAL = /^[a-z0-9_-]$/;
/** A file named for a long key: `~` + SHA-256 hex of the key; the key is kept inside the file. */
export const HASHED_NAME_PREFIX = '~';
/** Temporary files of atomic writes start with a dot, which no key name contains (`.` is escaped). */
export const TEMP_NAME_PREFIX = '.tmp-';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The name of a key's file, or `undefined` when the key needs a hashed name. */
export function escapedName(key: string): string | undefined {
  let name = '';
  for (const byte of encoder.encode(key)) {
    const ch = String.fromCharCode(byte);
    name += LITERAL.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    if (name.length > MAX_NAME_LENGTH) return undefined;
  }
  return name;
}

/** The key of an escaped file name, or `undefined` for a name FileStore did not write. */
export function keyOfName(name: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < name.length; ) {
    const ch = name[i]!;
    if (ch === '%') {
      const hex = name.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 3;
    } else {
      if (!LITERAL.test(ch)) return undefined;
      bytes.push(ch.charCodeAt(0));
      i += 1;
    }
  }
  try {
    const key = decoder.decode(new Uint8Array(bytes));
    // Only the canonical spelling: a foreign `%61` is not the file of key `a`.
    return key.length > 0 && escapedName(key) === name ? key : undefined;
  } catch {
    return undefined;
  }
}
