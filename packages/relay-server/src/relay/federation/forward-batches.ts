import { DEFAULT_PARSE_LIMITS } from '@wmp/jsonrpc-envelope';

/**
 * Most forwards in one frame: the batch size a relay parses (docs/wmp-profile.md, "Messages":
 * batches of at most 100), so any peer of this profile takes a page's batch whole.
 */
export const MAX_FORWARD_BATCH = DEFAULT_PARSE_LIMITS.maxBatch;

/**
 * Room per entry for what goes around its stored text in the frame: the request's id, the link
 * session's `wmp` metadata, the batch's brackets and commas.
 */
export const FORWARD_ENTRY_OVERHEAD = 512;

/**
 * Splits forwards, in order, into batches of at most MAX_FORWARD_BATCH entries whose frame stays
 * within `frameBytes` (each entry's `bytes` plus FORWARD_ENTRY_OVERHEAD); an entry too large to
 * share a frame goes alone, as it would without batching (its own size is the peer's to judge).
 */
export function forwardBatches<T extends { readonly bytes: number }>(entries: readonly T[], frameBytes: number): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let size = 0;
  for (const entry of entries) {
    const cost = entry.bytes + FORWARD_ENTRY_OVERHEAD;
    if (batch.length > 0 && (batch.length >= MAX_FORWARD_BATCH || size + cost > frameBytes)) {
      batches.push(batch);
      batch = [];
      size = 0;
    }
    batch.push(entry);
    size += cost;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
