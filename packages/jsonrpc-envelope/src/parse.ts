import { InvalidParamsError, InvalidRequestError, type WmpError } from './errors.js';
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from './limits.js';
import { recoverId, toMessage } from './message.js';
import type { JsonRpcId, JsonRpcMessage } from './message-types.js';
import { decodeUtf8, holdsInexactInteger, parseStrictJsonReporting } from './strict-json.js';

/** A batch entry that is not a valid message: answered with its own error (JSON-RPC §6). */
export interface InvalidBatchEntry {
  readonly invalid: WmpError;
  readonly id: JsonRpcId | null;
}

export type BatchEntry = JsonRpcMessage | InvalidBatchEntry;

/**
 * What `parseMessage` returns: one message, or a batch whose entries were checked one by one, or
 * one message that is well formed but invalid where its id is known (an integer JSON cannot carry
 * exactly in its params: -32602 to that id).
 */
export type ParsedInput =
  | { readonly kind: 'message'; readonly message: JsonRpcMessage }
  | { readonly kind: 'batch'; readonly entries: readonly BatchEntry[] }
  | ({ readonly kind: 'invalid'; readonly message: JsonRpcMessage } & InvalidBatchEntry);

export function isInvalidEntry(entry: BatchEntry): entry is InvalidBatchEntry {
  return 'invalid' in entry;
}

/**
 * Parses one frame of WMP input: a single JSON-RPC message or a batch.
 *
 * Throws only `WmpError`: -32700 for invalid JSON or UTF-8; -32600 for an invalid message, a
 * frame over `maxBytes`, nesting deeper than `maxDepth`, a duplicate key, an unsafe integer in an
 * id, an empty batch or one over `maxBatch`. Invalid entries inside a batch do not fail the batch.
 * An unsafe integer (one JSON numbers cannot carry exactly) is judged with the message it is in,
 * once its id is known: in a request's params it is -32602 to that id (kind `invalid`).
 */
export function parseMessage(input: string | Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedInput {
  const text = typeof input === 'string' ? input : decodeUtf8(input, limits.maxBytes);
  const { value, inexactInteger } = parseStrictJsonReporting(text, limits);
  if (!Array.isArray(value)) {
    const message = toMessage(value);
    if (!inexactInteger) return { kind: 'message', message };
    return { kind: 'invalid', message, ...inexactRefusal(message) };
  }
  if (value.length === 0) throw new InvalidRequestError({ reason: 'empty batch' });
  if (value.length > limits.maxBatch) throw new InvalidRequestError({ reason: 'batch too large' });
  return { kind: 'batch', entries: value.map((entry) => toBatchEntry(entry, inexactInteger)) };
}

function toBatchEntry(value: unknown, inexactInteger: boolean): BatchEntry {
  let message: JsonRpcMessage;
  try {
    message = toMessage(value);
  } catch (e) {
    return { invalid: e as WmpError, id: recoverId(value) };
  }
  return inexactInteger && holdsInexactInteger(value) ? inexactRefusal(message) : message;
}

const OUT_OF_RANGE = { reason: 'integer out of range' };

/**
 * The answer to a well-formed message holding an integer JSON cannot carry exactly: in a request's
 * (or notification's) params, -32602 to its id; anywhere else (a response, an extra member),
 * -32600, to the id of a request and to none (null) otherwise.
 */
function inexactRefusal(message: JsonRpcMessage): InvalidBatchEntry {
  const isCall = 'method' in message;
  const id = isCall && 'id' in message ? message.id : null;
  if (isCall && 'params' in message && holdsInexactInteger(message.params)) {
    return { invalid: new InvalidParamsError(OUT_OF_RANGE), id };
  }
  return { invalid: new InvalidRequestError(OUT_OF_RANGE), id };
}

/** Parses input that must be exactly one message (a batch is -32600). */
export function parseSingleMessage(
  input: string | Uint8Array,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): JsonRpcMessage {
  const parsed = parseMessage(input, limits);
  if (parsed.kind === 'batch') throw new InvalidRequestError({ reason: 'batch not allowed here' });
  if (parsed.kind === 'invalid') throw parsed.invalid;
  return parsed.message;
}
