// The admin socket's framing (pure): one JSON request line, one JSON answer line, then close.
import { AdminError, type AdminErrorCode, isAdminErrorCode } from './admin-errors.js';

/** The largest request or answer line read (an answer with many queues is the large one). */
export const MAX_REQUEST_BYTES = 64 * 1024;
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export interface AdminRequest {
  readonly command: string;
  readonly args: Readonly<Record<string, unknown>>;
}

export type AdminAnswer =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: { readonly code: AdminErrorCode; readonly message: string } };

export function encodeRequest(request: AdminRequest): string {
  return `${JSON.stringify(request)}\n`;
}

export function decodeRequest(line: string): AdminRequest {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new AdminError('usage', 'not a JSON request');
  }
  const r = value as { command?: unknown; args?: unknown };
  if (typeof r?.command !== 'string' || typeof r.args !== 'object' || r.args === null || Array.isArray(r.args)) {
    throw new AdminError('usage', 'a request is {"command": string, "args": object}');
  }
  return { command: r.command, args: r.args as Record<string, unknown> };
}

export function encodeAnswer(answer: AdminAnswer): string {
  return `${JSON.stringify(answer)}\n`;
}

export function decodeAnswer(line: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new AdminError('failed', 'the relay answered something that is not JSON');
  }
  const a = value as { ok?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };
  if (a?.ok === true) return a.result;
  if (a?.ok === false && isAdminErrorCode(a.error?.code) && typeof a.error?.message === 'string') {
    throw new AdminError(a.error.code, a.error.message);
  }
  throw new AdminError('failed', 'the relay answered something that is not an admin answer');
}
