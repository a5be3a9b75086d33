import { InvalidParamsError } from '@wmp/jsonrpc-envelope';
import type { SessionRecord } from '@wmp/session';
import type { RelayTimings } from '../support/limits.js';

/**
 * When a routed message leaves the queue unacknowledged (docs/architecture.md, "Delivering a
 * message"): the sender's `expires_at`, else the sender session's negotiated `offline.ttl`, else
 * the relay default; never later than `maxMessageTtlSeconds` from now. An `expires_at` already past
 * is -32602.
 */
export function expiryOf(
  expiresAt: string | undefined,
  session: SessionRecord,
  timings: RelayTimings,
  now: number,
): number {
  const latest = now + timings.maxMessageTtlSeconds * 1000;
  if (expiresAt !== undefined) {
    const at = Date.parse(expiresAt);
    if (at <= now) throw new InvalidParamsError({ reason: 'expires_at has passed' });
    return Math.min(at, latest);
  }
  const ttl = session.capabilities.offline?.ttl ?? timings.messageTtlSeconds;
  return Math.min(now + ttl * 1000, latest);
}
