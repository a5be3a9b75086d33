/**
 * Waits `ms`, or rejects with the signal's reason as soon as it aborts (at once when it already
 * has). The one abortable wait of the project: a caller that treats an abort as the end of the
 * wait catches it (`.catch(() => undefined)`).
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
