import type { SessionRecord } from '@wmp/session';
import { lifetimeOf } from '../support/lifetime.js';
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
  dueAt?: number,
): number {
  return lifetimeOf(expiresAt, session.capabilities.offline?.ttl ?? timings.messageTtlSeconds, timings, now, dueAt);
}
