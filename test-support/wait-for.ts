// The one way tests wait for state: `check` (a relay's, a server's or a client's own state, maybe
// async) is asked again until it holds, through vitest's `vi.waitFor`; after `timeoutMs` the wait
// fails naming `what`. Never a fixed sleep standing in for "it has happened".
import { vi } from 'vitest';

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 10 },
  );
}
