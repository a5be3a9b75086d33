/** Why a capped body could not be read. */
export type CappedBodyFailure = 'too_large' | 'timeout' | 'network';

/**
 * The body of a fetched `response`, refused past `maxBytes` (declared or streamed), for
 * documents fetched from servers nobody controls (did:web documents, a relay's well-known).
 * `fail` makes the caller's own typed error of each failure.
 */
export async function readCappedBody(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
  fail: (failure: CappedBodyFailure) => Error,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw fail('too_large');
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let tooLarge = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        tooLarge = true;
        await reader.cancel().catch(() => undefined);
        break;
      }
      chunks.push(value);
    }
  } catch {
    throw fail(signal.aborted ? 'timeout' : 'network');
  }
  if (tooLarge) throw fail('too_large');
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
