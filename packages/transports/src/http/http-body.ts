import type { ByteBudget } from '../byte-budget.js';

export interface BodyReadOptions {
  /** Largest body accepted. */
  readonly maxBytes: number;
  /** The request's `Content-Length`, checked before any byte is read. */
  readonly declaredLength?: string | null | undefined;
  /** Bytes being read across the server: each chunk is reserved while the read lasts. */
  readonly budget?: ByteBudget | undefined;
  /** The whole body must arrive within this long (a client that trickles bytes holds memory). */
  readonly timeoutMs?: number | undefined;
}

/**
 * A body read, or why it was refused: over `maxBytes`, too slow, the server's budget is spent, or
 * the client went away (its stream failed) before it was all there.
 */
export type BodyRead =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly reason: 'too_large' | 'timeout' | 'busy' | 'aborted' };

const TOO_LARGE: BodyRead = Object.freeze({ ok: false, reason: 'too_large' });
const TIMEOUT: BodyRead = Object.freeze({ ok: false, reason: 'timeout' });
const BUSY: BodyRead = Object.freeze({ ok: false, reason: 'busy' });
const ABORTED: BodyRead = Object.freeze({ ok: false, reason: 'aborted' });

/**
 * Reads a request body under its bounds. A declared `Content-Length` over the cap is refused
 * before anything is read; a body that passes the cap, does not arrive in time or does not fit in
 * the budget is cut off at once (the rest is never read). What was reserved is released when the
 * read ends, however it ends.
 */
export async function readBody(body: ReadableStream<Uint8Array> | null, options: BodyReadOptions): Promise<BodyRead> {
  const { maxBytes, declaredLength, budget, timeoutMs } = options;
  if (declaredLength !== undefined && declaredLength !== null && declaredLength !== '') {
    const declared = Number(declaredLength);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await body?.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
  }
  if (!body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let reserved = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired =
    timeoutMs === undefined
      ? undefined
      : new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
          (timer as { unref?: () => void }).unref?.();
        });
  try {
    for (;;) {
      const next = reader.read();
      let step: Awaited<typeof next> | 'timeout';
      try {
        step = expired ? await Promise.race([next, expired]) : await next;
      } catch {
        return ABORTED;
      }
      if (step === 'timeout') {
        next.catch(() => undefined);
        await reader.cancel().catch(() => undefined);
        return TIMEOUT;
      }
      if (step.done) break;
      const value = step.value;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return TOO_LARGE;
      }
      if (budget) {
        if (!budget.tryReserve(value.byteLength)) {
          await reader.cancel().catch(() => undefined);
          return BUSY;
        }
        reserved += value.byteLength;
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
    budget?.release(reserved);
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0]! };
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return { ok: true, bytes: out };
}

/** `readBody` with only a size cap: the body, or undefined when it is larger than `maxBytes` (clients). */
export async function readBoundedBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  declaredLength?: string | null,
): Promise<Uint8Array | undefined> {
  const read = await readBody(body, { maxBytes, declaredLength });
  return read.ok ? read.bytes : undefined;
}
