// The one way tests read how a call ended: 'ok' when it returned or resolved, else the error's
// stable `code` (the error itself when it has none), so a test compares codes, never messages.
// With `kind`, the error must also be an instance of that class.
import { expect } from 'vitest';

export async function codeOf(
  call: Promise<unknown> | (() => unknown),
  kind?: abstract new (...args: never[]) => unknown,
): Promise<unknown> {
  try {
    await (typeof call === 'function' ? call() : call);
    return 'ok';
  } catch (error) {
    if (kind !== undefined) expect(error).toBeInstanceOf(kind);
    return (error as { code?: unknown } | null)?.code ?? error;
  }
}

/** What a refused call carried, its `code` and `data` (`data.reason` says which case), or 'ok'. */
export async function refusal(p: Promise<unknown>): Promise<{ code: unknown; data: unknown } | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return { code: (e as { code?: unknown }).code, data: (e as { data?: unknown }).data };
  }
}
