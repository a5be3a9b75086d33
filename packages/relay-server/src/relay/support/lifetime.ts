import { CapabilityNotSupportedError, InvalidParamsError } from '@wmp/jsonrpc-envelope';
import type { RelayTimings } from './limits.js';

/**
 * A message's expiry from `expires_at` or a lifetime of `ttlSeconds`, counted from when it falls
 * due (`dueAt`, scheduled delivery) or now: a message held for next week does not expire
 * tomorrow. Never later than `maxMessageTtlSeconds` after that; an `expires_at` already past, or
 * not after `deliver_after`, is -32602.
 */
export function lifetimeOf(
  expiresAt: string | undefined,
  ttlSeconds: number,
  timings: Pick<RelayTimings, 'maxMessageTtlSeconds'>,
  now: number,
  dueAt?: number,
): number {
  const from = dueAt ?? now;
  const latest = from + timings.maxMessageTtlSeconds * 1000;
  if (expiresAt !== undefined) {
    const at = Date.parse(expiresAt);
    if (at <= now) throw new InvalidParamsError({ reason: 'expires_at has passed' });
    if (dueAt !== undefined && at <= dueAt) throw new InvalidParamsError({ reason: 'expires_at before deliver_after' });
    return Math.min(at, latest);
  }
  return Math.min(from + ttlSeconds * 1000, latest);
}

/**
 * When a message asks to be delivered (`wmp.deliver_after`, core §3.2): undefined for now (none,
 * or a time already past). Scheduled delivery turned off is -31005 naming it (never treated as a
 * plain message); a time further ahead than the longest message lifetime is -32602.
 */
export function scheduledAt(
  wmp: { readonly deliver_after?: string | undefined },
  enabled: boolean,
  timings: Pick<RelayTimings, 'maxMessageTtlSeconds'>,
  now: number,
): number | undefined {
  const after = wmp.deliver_after;
  if (after === undefined) return undefined;
  if (!enabled) throw new CapabilityNotSupportedError({ capability: 'erds', unsupported: ['scheduled_delivery'] });
  const at = Date.parse(after);
  if (at > now + timings.maxMessageTtlSeconds * 1000) {
    throw new InvalidParamsError({ reason: 'deliver_after too far ahead' });
  }
  return at > now ? at : undefined;
}
