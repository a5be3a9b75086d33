/**
 * UTF-8 length of a string without encoding it (caps count bytes; stored events are ASCII, so the
 * loop mostly just steps). A surrogate pair is 4 bytes; a lone surrogate counts as the 3-byte
 * replacement character, as TextEncoder writes it.
 */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      n += 1;
      continue;
    }
    const next = text.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
    n += 2;
  }
  return n;
}
