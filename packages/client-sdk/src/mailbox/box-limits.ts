/** What a sender needs from a box's `GET /ohan/v1/limits` answer. */
export interface BoxLimitsInfo {
  readonly directory: boolean;
  /** Stamp bits a stranger's event needs there. */
  readonly strangerBits: number;
  /** Stamp bits the card of a key the box does not know needs (`card_stamp_bits`, else the stranger bits). */
  readonly cardStampBits: number;
  readonly maxEventBytes: number;
  readonly maxTtlSeconds: number;
}

function isCount(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;
}

/** The fields the client uses, checked; `undefined` when the answer is not a limits document. */
export function parseBoxLimits(value: unknown): BoxLimitsInfo | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (v.protocol !== 'ohan.relay.1' || typeof v.directory !== 'boolean') return undefined;
  if (!isCount(v.stranger_bits, 0, 255) || !isCount(v.max_event_bytes, 256, 2 ** 31)) return undefined;
  if (!isCount(v.max_ttl_seconds, 1, 2 ** 31)) return undefined;
  return {
    directory: v.directory,
    strangerBits: v.stranger_bits,
    cardStampBits: isCount(v.card_stamp_bits, 0, 255) ? v.card_stamp_bits : v.stranger_bits,
    maxEventBytes: v.max_event_bytes,
    maxTtlSeconds: v.max_ttl_seconds,
  };
}
