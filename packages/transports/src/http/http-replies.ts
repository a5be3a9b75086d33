import { type ErrorCodeValue, ErrorMessage, type JsonRpcErrorResponse, type JsonRpcId } from '@wmp/jsonrpc-envelope';

/** A JSON-RPC error with id null: what the HTTP binding answers when a request never reaches the Peer. */
export function bindingError(code: ErrorCodeValue, reason?: string): JsonRpcErrorResponse {
  return {
    jsonrpc: '2.0',
    id: null,
    error: { code, message: ErrorMessage[code], ...(reason === undefined ? {} : { data: { reason } }) },
  };
}

/**
 * The binding's refusal of a whole POST, addressed to each request it carried (so the caller's
 * calls settle with it), or one error of id null when it carried none.
 */
export function bindingErrors(
  code: ErrorCodeValue,
  ids: readonly (JsonRpcId | null)[],
  batch: boolean,
  reason?: string,
): unknown {
  const one = bindingError(code, reason);
  const errors = ids.length === 0 ? [one] : ids.map((id) => ({ ...one, id }));
  return batch ? errors : errors[0];
}

/** A JSON response with the given status and extra headers. */
export function jsonReply(body: unknown, status: number, headers: Readonly<Record<string, string>> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers },
  });
}

/** Headers of every SSE response. `no-transform` and `X-Accel-Buffering` keep proxies from buffering it. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
};
