import { InvalidRequestError, type WmpError } from './errors.js';
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from './limits.js';
import { recoverId, toMessage } from './message.js';
import type { JsonRpcId, JsonRpcMessage } from './message-types.js';
import { decodeUtf8, parseStrictJson } from './strict-json.js';

/** A batch entry that is not a valid message: answered with its own error (JSON-RPC §6). */
export interface InvalidBatchEntry {
  readonly invalid: WmpError;
  readonly id: JsonRpcId | null;
}

export type BatchEntry = JsonRpcMessage | InvalidBatchEntry;

/** What `parseMessage` returns: one message, or a batch whose entries were checked one by one. */
export type ParsedInput =
  | { readonly kind: 'message'; readonly message: JsonRpcMessage }
  | { readonly kind: 'batch'; readonly entries: readonly BatchEntry[] };

export function isInvalidEntry(entry: BatchEntry): entry is InvalidBatchEntry {
  return 'invalid' in entry;
}

/**
 * Parses one frame of WMP input: a single JSON-RPC message or a batch.
 *
 * Throws only `WmpError`: -32700 for invalid JSON or UTF-8; -32600 for an invalid message, a
 * frame over `maxBytes`, nesting deeper than `maxDepth`, a duplicate key, an unsafe integer, an
 * empty batch or one over `maxBatch`. Invalid entries inside a batch do not fail the batch.
 */
export function parseMessage(input: string | Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedInput {
  const text = typeof input === 'string' ? input : decodeUtf8(input, limits.maxBytes);
  const value = parseStrictJson(text, limits);
  if (!Array.isArray(value)) return { kind: 'message', message: toMessage(value) };
  if (value.length === 0) throw new InvalidRequestError({ reason: 'empty batch' });
  if (value.length > limits.maxBatch) throw new InvalidRequestError({ reason: 'batch too large' });
  return { kind: 'batch', entries: value.map(toBatchEntry) };
}

function toBatchEntry(value: unknown): BatchEntry {
  try {
    return toMessage(value);
  } catch (e) {
    return { invalid: e as WmpError, id: recoverId(value) };
  }
}

/** Parses input that must be exactly one message (a batch is -32600). */
export function parseSingleMessage(
  input: string | Uint8Array,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): JsonRpcMessage {
  const parsed = parseMessage(input, limits);
  if (parsed.kind === 'batch') throw new InvalidRequestError({ reason: 'batch not allowed here' });
  return parsed.message;
}
