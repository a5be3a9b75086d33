import { ReplayCacheFullError } from '@wmp/jcs-signing';
import { verifyRequest } from '@wmp/ohan-seal';
import type { Context } from 'hono';
import type { BoxContext } from './context.js';
import { BoxApiError } from './errors.js';

/**
 * The path and query the client signed: the request target as received, relative to the box's
 * origin, so it includes the mount prefix (`/ohan/v1/...`). Taken from the raw URL, never rebuilt
 * from parsed parameters, so the bytes compared are the bytes sent.
 */
export function requestTarget(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const hash = url.indexOf('#', start);
  return hash < 0 ? url.slice(start) : url.slice(start, hash);
}

/**
 * What a signed call does for a key the box holds nothing of (no card, no events, no allow list):
 * `reads` changes and returns nothing then (a fetch, the allow list, delivered), so its replay has
 * no effect to repeat and its nonce is not remembered; `changes` acts anyway (an allow list set, a
 * stream that waits for events), so its nonce always is.
 */
export type SignedCall = 'reads' | 'changes';

/**
 * Verifies `Authorization: OHAN-Sig` for this request and returns the caller's key; the key a
 * signed call acts for comes only from here, never from the URL or body. Every failure is the same
 * `unauthorized` (which check failed is not told), and a caller over its rate gets `rate_limited`.
 * The rate limit is spent after the signature holds and before the nonce is recorded
 * (docs/architecture.md, "Replay caches"), so refused requests leave nothing in the replay cache; a
 * full cache is `unavailable` (503). The nonce is counted against the key's and the source's shares
 * of the cache, and a `reads` call of a key the box holds nothing of records none (so throwaway
 * keys cannot fill the cache).
 */
export async function authenticate(
  c: Context,
  box: BoxContext,
  body: Uint8Array | undefined,
  call: SignedCall,
): Promise<string> {
  const { origin, nonces, now, skewSeconds, store, sourceOf } = box.options;
  const source = sourceOf?.(c);
  let verdict: Awaited<ReturnType<typeof verifyRequest>>;
  try {
    verdict = await verifyRequest(c.req.header('authorization'), {
      origin,
      method: c.req.method,
      target: requestTarget(c.req.url),
      body,
      now: now(),
      nonces,
      skewSeconds,
      admit: (key) => box.limiter === undefined || box.limiter.take(key),
      ...(call === 'reads' ? { remember: (key: string) => store.holdsAny(key, now()) } : {}),
      ...(source === undefined ? {} : { source }),
    });
  } catch (error) {
    if (error instanceof ReplayCacheFullError) throw new BoxApiError('unavailable');
    throw error;
  }
  if (!verdict.ok) throw new BoxApiError(verdict.reason === 'rate_limited' ? 'rate_limited' : 'unauthorized');
  return verdict.key;
}

/** Spends one request of `key`'s budget, or answers `rate_limited`. */
export async function limitKey(box: BoxContext, key: string): Promise<void> {
  if (box.limiter !== undefined && !(await box.limiter.take(key))) throw new BoxApiError('rate_limited');
}
