import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReconnectFailedError, ReconnectPolicy, reconnect } from '../src/index.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('ReconnectPolicy', () => {
  it('doubles from 1 s to a 30 s cap and allows 10 attempts (transport spec §3.5)', () => {
    const p = new ReconnectPolicy({ jitter: 'none' });
    expect(Array.from({ length: 12 }, (_, i) => p.nextDelay(i + 1))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000, 30000, 30000, 30000,
    ]);
    expect(Array.from({ length: 11 }, (_, i) => p.shouldRetry(i + 1))).toEqual([...Array(10).fill(true), false]);
    expect(p.delayCeiling(1000)).toBe(30000);
  });

  it('draws full jitter from [0, ceiling] with the injected randomness', () => {
    let r = 0;
    const p = new ReconnectPolicy({ random: () => r });
    expect(p.nextDelay(3)).toBe(0);
    r = 0.5;
    expect(p.nextDelay(3)).toBe(2000);
    r = 0.99999;
    expect(p.nextDelay(9)).toBe(30000);
    r = 7; // a broken source cannot leave the range
    expect(p.nextDelay(1)).toBe(1000);
    r = -1;
    expect(p.nextDelay(1)).toBe(0);
  });

  it('jitters with Math.random by default, within the ceiling', () => {
    const p = new ReconnectPolicy();
    const delays = Array.from({ length: 200 }, () => p.nextDelay(4));
    expect(Math.max(...delays)).toBeLessThanOrEqual(8000);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(new Set(delays).size).toBeGreaterThan(50);
  });

  it('property: every delay lies in [0, min(cap, initial * 2^(n-1))]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (initial, extra, attempt, r) => {
          const p = new ReconnectPolicy({ initialDelayMs: initial, maxDelayMs: initial + extra, random: () => r });
          const ceiling = Math.min(initial + extra, initial * 2 ** (attempt - 1));
          const d = p.nextDelay(attempt);
          expect(Number.isInteger(d)).toBe(true);
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThanOrEqual(ceiling);
        },
      ),
    );
  });

  it('takes other limits, including retrying forever', () => {
    const p = new ReconnectPolicy({ maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 250, jitter: 'none' });
    expect([1, 2, 3, 4].map((n) => p.nextDelay(n))).toEqual([100, 200, 250, 250]);
    expect([3, 4].map((n) => p.shouldRetry(n))).toEqual([true, false]);
    expect(new ReconnectPolicy({ maxAttempts: Number.POSITIVE_INFINITY }).shouldRetry(1e9)).toBe(true);
  });

  it.each([
    { initialDelayMs: -1 },
    { initialDelayMs: Number.NaN },
    { maxDelayMs: 10 },
    { maxDelayMs: Number.POSITIVE_INFINITY },
    { maxAttempts: 0 },
    { maxAttempts: 1.5 },
    { factor: 0.5 },
  ])('refuses %j', (options) => {
    expect(() => new ReconnectPolicy(options)).toThrow(RangeError);
  });

  it('withInitialDelay keeps every other setting and caps the new first delay (an SSE retry:)', () => {
    const p = new ReconnectPolicy({ initialDelayMs: 100, maxAttempts: 4, maxDelayMs: 500, factor: 3, jitter: 'none' });
    const q = p.withInitialDelay(20);
    expect([1, 2, 3, 4, 5].map((n) => q.nextDelay(n))).toEqual([20, 60, 180, 500, 500]);
    expect([4, 5].map((n) => q.shouldRetry(n))).toEqual([true, false]);
    expect(p.withInitialDelay(10_000).nextDelay(1)).toBe(500);
    const jittered = new ReconnectPolicy({ random: () => 0.5 }).withInitialDelay(100);
    expect(jittered.nextDelay(2)).toBe(100);
  });

  it('refuses attempt numbers below 1', () => {
    const p = new ReconnectPolicy();
    expect(() => p.nextDelay(0)).toThrow(RangeError);
    expect(() => p.shouldRetry(-1)).toThrow(RangeError);
    expect(() => p.delayCeiling(1.5)).toThrow(RangeError);
  });
});

describe('reconnect', () => {
  const fixed = new ReconnectPolicy({ random: () => 0.9999999 }); // delays at their ceilings

  it('waits the policy delays with fake timers and resolves on the first success', async () => {
    vi.useFakeTimers();
    const calls: number[] = [];
    const connect = vi.fn(async ({ attempt }: { attempt: number }) => {
      calls.push(Date.now());
      if (attempt < 3) throw new Error(`refused ${attempt}`);
      return 'connected';
    });
    const start = Date.now();
    const result = reconnect(connect, fixed);
    await vi.advanceTimersByTimeAsync(999);
    expect(connect).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(connect).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1999);
    expect(connect).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1 + 4000);
    await expect(result).resolves.toBe('connected');
    expect(calls.map((t) => t - start)).toEqual([1000, 3000, 7000]);
  });

  it('rejects with ReconnectFailedError after the last attempt, carrying the last error', async () => {
    vi.useFakeTimers();
    const connect = vi.fn(async ({ attempt }: { attempt: number }) => {
      throw new Error(`refused ${attempt}`);
    });
    const result = reconnect(connect, fixed).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000 + 2000 + 4000 + 8000 + 16000 + 5 * 30000);
    const error = await result;
    expect(error).toBeInstanceOf(ReconnectFailedError);
    expect(error).toMatchObject({ code: 'ERR_RECONNECT_FAILED', attempts: 10 });
    expect((error as Error).cause).toEqual(new Error('refused 10'));
    expect(connect).toHaveBeenCalledTimes(10);
  });

  it('stops when aborted during a wait, with the signal reason', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const connect = vi.fn(async () => {
      throw new Error('refused');
    });
    const result = reconnect(connect, fixed, { signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1500);
    expect(connect).toHaveBeenCalledTimes(1);
    const reason = new Error('user gave up');
    controller.abort(reason);
    expect(await result).toBe(reason);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(connect).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not start when the signal is already aborted, and passes the signal to connect', async () => {
    const controller = new AbortController();
    controller.abort();
    const connect = vi.fn(async () => 'x');
    await expect(reconnect(connect, fixed, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(connect).not.toHaveBeenCalled();

    const live = new AbortController();
    const seen = vi.fn(async (info: { attempt: number; signal?: AbortSignal }) => info);
    const info = await reconnect(seen, fixed, { signal: live.signal, sleep: async () => {} });
    expect(info).toEqual({ attempt: 1, signal: live.signal });
  });

  it('rethrows at once an error that retrying cannot fix', async () => {
    const bad = new Error('bad credentials');
    const connect = vi.fn(async () => {
      throw bad;
    });
    const sleep = vi.fn(async () => {});
    await expect(reconnect(connect, fixed, { sleep, isRetryable: (e) => e !== bad })).rejects.toBe(bad);
    expect(connect).toHaveBeenCalledTimes(1);
  });

  it('uses an injected sleep and reports each retry', async () => {
    const waits: number[] = [];
    const retries: unknown[] = [];
    const policy = new ReconnectPolicy({ maxAttempts: 4, jitter: 'none' });
    const error = await reconnect(
      async () => {
        throw new Error('down');
      },
      policy,
      {
        sleep: async (ms) => {
          waits.push(ms);
        },
        onRetry: ({ attempt, delayMs, error }) =>
          retries.push([attempt, delayMs, (error as Error | undefined)?.message]),
      },
    ).catch((e: unknown) => e);
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
    expect(retries).toEqual([
      [1, 1000, undefined],
      [2, 2000, 'down'],
      [3, 4000, 'down'],
      [4, 8000, 'down'],
    ]);
    expect(error).toMatchObject({ attempts: 4 });
  });

  it('uses the default policy when none is given', async () => {
    let n = 0;
    const result = await reconnect(
      async () => {
        if (++n < 10) throw new Error('down');
        return n;
      },
      undefined,
      { sleep: async () => {} },
    );
    expect(result).toBe(10);
    await expect(
      reconnect(
        async () => {
          throw new Error('down');
        },
        undefined,
        { sleep: async () => {} },
      ),
    ).rejects.toMatchObject({ attempts: 10 });
  });
});
