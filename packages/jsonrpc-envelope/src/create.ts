import type { WmpError } from './errors.js';
import type {
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcNotification,
  JsonRpcParams,
  JsonRpcRequest,
  JsonRpcSuccessResponse,
} from './message-types.js';

export function createRequest(id: JsonRpcId, method: string, params?: JsonRpcParams): JsonRpcRequest {
  return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
}

export function createNotification(method: string, params?: JsonRpcParams): JsonRpcNotification {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

/** A success response; a handler that returned nothing answers `{}` (docs/wmp-profile.md, "Messages"). */
export function createResponse(id: JsonRpcId, result: unknown): JsonRpcSuccessResponse {
  return { jsonrpc: '2.0', id, result: result === undefined ? {} : result };
}

export function createErrorResponse(id: JsonRpcId | null, error: WmpError): JsonRpcErrorResponse {
  return error.toResponse(id);
}
