/** Bounds applied by `parseMessage` before and while parsing. */
export interface ParseLimits {
  /** Largest accepted message, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Deepest accepted nesting of objects and arrays (the outermost value is depth 1). */
  readonly maxDepth: number;
  /** Most entries in one batch. */
  readonly maxBatch: number;
}

/** The relay default (docs/wmp-profile.md, "Messages"): 1 MiB, depth 32, batches of at most 100. */
export const DEFAULT_PARSE_LIMITS: ParseLimits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 32,
  maxBatch: 100,
});

/** Every transport must accept at least this much (WMP transport §2). */
export const MIN_MESSAGE_BYTES = 64 * 1024;
