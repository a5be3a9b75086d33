import { NotAuthorizedError, type WmpError } from '@wmp/jsonrpc-envelope';

/**
 * The `data.reason` of every credential an authenticator refuses (-31002). Problems with the
 * exchange itself (no sender, an unknown or used challenge, a missing field) keep their own
 * plain-text reasons; see docs/wmp-profile.md.
 */
export const AUTH_FAILURE_REASONS = [
  'untrusted_chain',
  'expired',
  'not_yet_valid',
  'san_mismatch',
  'fingerprint_mismatch',
  'bad_signature',
  'unsupported_scheme',
  'unsupported_algorithm',
  'did_resolution_failed',
  'dpop_invalid',
  'dpop_replay',
] as const;

export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

/**
 * -31002 with `data.reason` and, when it helps an operator, a `detail` from a fixed vocabulary
 * (never a library's message, which may carry internals).
 */
export function authFailure(reason: AuthFailureReason, detail?: string): WmpError {
  return new NotAuthorizedError(detail === undefined ? { reason } : { reason, detail });
}

/** The `data.reason` of a WmpError, if it has one. */
export function reasonOf(error: unknown): string | undefined {
  const data = (error as { data?: unknown } | null)?.data;
  const reason = data !== null && typeof data === 'object' ? (data as { reason?: unknown }).reason : undefined;
  return typeof reason === 'string' ? reason : undefined;
}
