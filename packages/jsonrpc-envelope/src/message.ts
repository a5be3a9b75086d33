import { InvalidRequestError } from './errors.js';

import type {
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcSuccessResponse,
} from './message-types.js';

export function isRequest(m: JsonRpcMessage): m is JsonRpcRequest {
  return 'method' in m && 'id' in m;
}
export function isNotification(m: JsonRpcMessage): m is JsonRpcNotification {
  return 'method' in m && !('id' in m);
}
export function isResponse(m: JsonRpcMessage): m is JsonRpcResponse {
  return !('method' in m);
}
export function isErrorResponse(m: JsonRpcMessage): m is JsonRpcErrorResponse {
  return 'error' in m && !('method' in m);
}

const MAX_ID_LENGTH = 256;
const MAX_METHOD_LENGTH = 128;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isId(v: unknown): v is JsonRpcId {
  return (typeof v === 'string' && v.length <= MAX_ID_LENGTH) || Number.isSafeInteger(v);
}

function invalid(reason: string): never {
  throw new InvalidRequestError({ reason });
}

/** The id of a value that failed validation, when one can be read from it (for the error reply). */
export function recoverId(value: unknown): JsonRpcId | null {
  return isObject(value) && isId(value.id) ? value.id : null;
}

/**
 * Checks that a parsed JSON value is one JSON-RPC 2.0 message and returns it typed.
 * Throws -32600 with `data.reason` otherwise. Unknown top-level members are ignored.
 */
export function toMessage(value: unknown): JsonRpcMessage {
  if (!isObject(value)) invalid('not an object');
  if (value.jsonrpc !== '2.0') invalid('jsonrpc must be "2.0"');
  const hasId = 'id' in value;
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method.length === 0 || value.method.length > MAX_METHOD_LENGTH) {
      invalid('method must be a non-empty string');
    }
    if ('result' in value || 'error' in value) invalid('a request carries no result or error');
    if ('params' in value && !isObject(value.params) && !Array.isArray(value.params)) {
      invalid('params must be an object or an array');
    }
    if (hasId && !isId(value.id)) invalid('id must be a string or a safe integer');
    return value as unknown as JsonRpcRequest | JsonRpcNotification;
  }
  if (!hasId) invalid('a response needs an id');
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) invalid('a response carries exactly one of result and error');
  if (hasResult) {
    if (!isId(value.id)) invalid('id must be a string or a safe integer');
    return value as unknown as JsonRpcSuccessResponse;
  }
  if (value.id !== null && !isId(value.id)) invalid('id must be a string, a safe integer or null');
  const error = value.error;
  if (!isObject(error) || !Number.isSafeInteger(error.code) || typeof error.message !== 'string') {
    invalid('error needs an integer code and a string message');
  }
  return value as unknown as JsonRpcErrorResponse;
}
