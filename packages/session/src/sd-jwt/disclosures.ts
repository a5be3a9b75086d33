// Checks the SD-JWT library leaves to its caller (RFC 9901 §7.1): every disclosure must be
// referenced by a digest in the issuer-signed payload (or in another disclosure), once.
/** A disclosure as the library decodes it. */
export interface DecodedDisclosure {
  readonly key?: string;
  readonly value: unknown;
  /** Its digest under the payload's `_sd_alg`, as the library computed it over the encoded text. */
  readonly _digest?: string;
}

const MAX_DEPTH = 16;

function collect(value: unknown, into: string[], depth: number): void {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) {
      const keys = item !== null && typeof item === 'object' && !Array.isArray(item) ? Object.keys(item) : [];
      if (keys.length === 1 && keys[0] === '...' && typeof (item as Record<string, unknown>)['...'] === 'string') {
        into.push((item as Record<string, string>)['...']!);
      } else collect(item, into, depth + 1);
    }
    return;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === '_sd' && Array.isArray(v))
      for (const d of v)
        if (typeof d === 'string') into.push(d);
        else collect(v, into, depth + 1);
  }
}

/** Whether each disclosure is referenced exactly once, and no digest appears twice. */
export function disclosuresReferenced(payload: unknown, disclosures: readonly DecodedDisclosure[]): boolean {
  const referenced: string[] = [];
  collect(payload, referenced, 0);
  for (const d of disclosures) collect(d.value, referenced, 0);
  if (new Set(referenced).size !== referenced.length) return false;
  const known = new Set(referenced);
  const seen = new Set<string>();
  for (const d of disclosures) {
    const digest = d._digest;
    if (typeof digest !== 'string' || !known.has(digest) || seen.has(digest)) return false;
    seen.add(digest);
  }
  return true;
}

/** The names of the object claims a holder disclosed. */
export function disclosedNames(disclosures: readonly { readonly key?: string }[]): string[] {
  return [...new Set(disclosures.map((d) => d.key).filter((k): k is string => typeof k === 'string'))];
}
