/**
 * Reconnection backoff (transport spec §3.5): exponential from 1 s, capped at 30 s, 10 attempts by
 * default, with full jitter (a delay drawn uniformly from [0, ceiling]) so that clients dropped
 * together by a relay restart do not all come back in the same instant. Pure and browser-safe;
 * `wmp.session.resume` after reconnecting belongs to the session layer.
 */

import { abortableSleep } from './abortable-sleep.js';
import { TransportError } from './errors.js';

export interface ReconnectPolicyOptions {
  /** Ceiling of the delay before the first attempt, in ms. Default 1000. */
  readonly initialDelayMs?: number;
  /** Largest ceiling, in ms. Default 30000. */
  readonly maxDelayMs?: number;
  /** Attempts before giving up; `Infinity` retries forever. Default 10. */
  readonly maxAttempts?: number;
  /** Growth of the ceiling per attempt. Default 2. */
  readonly factor?: number;
  /** `'full'` (default) draws each delay from [0, ceiling]; `'none'` waits the ceiling itself. */
  readonly jitter?: 'full' | 'none';
  /** Uniform in [0, 1). Default `Math.random`; inject for deterministic tests. */
  readonly random?: () => number;
}

/**
 * Attempts are numbered from 1. Every attempt of a reconnection is a retry of the connection
 * that dropped, so even the first one waits (up to `initialDelayMs`).
 */
export class ReconnectPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxAttempts: number;
  readonly factor: number;
  readonly jitter: 'full' | 'none';
  private readonly random: () => number;

  constructor(options: ReconnectPolicyOptions = {}) {
    this.initialDelayMs = options.initialDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.maxAttempts = options.maxAttempts ?? 10;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 'full';
    this.random = options.random ?? Math.random;
    if (!(Number.isFinite(this.initialDelayMs) && this.initialDelayMs >= 0)) {
      throw new RangeError('initialDelayMs must be a finite number >= 0');
    }
    if (!(Number.isFinite(this.maxDelayMs) && this.maxDelayMs >= this.initialDelayMs)) {
      throw new RangeError('maxDelayMs must be finite and >= initialDelayMs');
    }
    if (
      !(
        this.maxAttempts === Number.POSITIVE_INFINITY ||
        (Number.isSafeInteger(this.maxAttempts) && this.maxAttempts >= 1)
      )
    ) {
      throw new RangeError('maxAttempts must be a positive integer or Infinity');
    }
    if (!(Number.isFinite(this.factor) && this.factor >= 1)) throw new RangeError('factor must be >= 1');
  }

  /** Upper bound of the delay before attempt `attempt`: initial * factor^(attempt-1), capped. */
  delayCeiling(attempt: number): number {
    checkAttempt(attempt);
    return Math.min(this.maxDelayMs, this.initialDelayMs * this.factor ** (attempt - 1));
  }

  /** The delay to wait before attempt `attempt`, in whole ms. */
  nextDelay(attempt: number): number {
    const ceiling = this.delayCeiling(attempt);
    if (this.jitter === 'none') return Math.round(ceiling);
    // Clamped so that a misbehaving random source cannot push a delay outside [0, ceiling].
    const r = Math.min(Math.max(this.random(), 0), 1);
    return Math.round(r * ceiling);
  }

  /**
   * The same policy from another first delay, capped at `maxDelayMs`: what an SSE server's
   * `retry:` asks for (the reconnection time, HTML §9.2).
   */
  withInitialDelay(initialDelayMs: number): ReconnectPolicy {
    return new ReconnectPolicy({
      initialDelayMs: Math.min(Math.max(initialDelayMs, 0), this.maxDelayMs),
      maxDelayMs: this.maxDelayMs,
      maxAttempts: this.maxAttempts,
      factor: this.factor,
      jitter: this.jitter,
      random: this.random,
    });
  }

  /** Whether attempt number `attempt` may be made. */
  shouldRetry(attempt: number): boolean {
    checkAttempt(attempt);
    return attempt <= this.maxAttempts;
  }
}

function checkAttempt(attempt: number): void {
  if (!(Number.isSafeInteger(attempt) && attempt >= 1)) throw new RangeError('attempt must be an integer >= 1');
}

/** Every attempt failed. `cause` is the last attempt's error. */
export class ReconnectFailedError extends TransportError {
  declare readonly code: 'ERR_RECONNECT_FAILED';
  readonly attempts: number;
  constructor(attempts: number, cause: unknown) {
    super('ERR_RECONNECT_FAILED', 'reconnection failed', { cause });
    this.name = 'ReconnectFailedError';
    this.attempts = attempts;
  }
}

export interface ReconnectAttempt {
  /** 1-based. */
  readonly attempt: number;
  readonly signal?: AbortSignal;
}

export interface ReconnectOptions {
  /** Aborting stops the loop (also during a wait) and rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
  /** Errors for which retrying cannot help (bad credentials): rethrown at once. Default: all retryable. */
  readonly isRetryable?: (error: unknown) => boolean;
  /** Called before each wait, e.g. to log or show "reconnecting in 4 s". */
  readonly onRetry?: (info: { readonly attempt: number; readonly delayMs: number; readonly error?: unknown }) => void;
  /** Waits `ms`. Default: the global `setTimeout`, looked up per call so fake timers apply. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Calls `connect` until it resolves, waiting `policy.nextDelay(n)` before attempt n, and rejects
 * with `ReconnectFailedError` once `policy.shouldRetry` says no.
 */
export async function reconnect<T>(
  connect: (attempt: ReconnectAttempt) => Promise<T>,
  policy: ReconnectPolicy = new ReconnectPolicy(),
  options: ReconnectOptions = {},
): Promise<T> {
  const { signal } = options;
  const sleep = options.sleep ?? abortableSleep;
  let lastError: unknown;
  let attempt = 1;
  for (; policy.shouldRetry(attempt); attempt++) {
    signal?.throwIfAborted();
    const delayMs = policy.nextDelay(attempt);
    options.onRetry?.(attempt === 1 ? { attempt, delayMs } : { attempt, delayMs, error: lastError });
    await sleep(delayMs, signal);
    signal?.throwIfAborted();
    try {
      return await connect(signal ? { attempt, signal } : { attempt });
    } catch (e) {
      if (options.isRetryable && !options.isRetryable(e)) throw e;
      lastError = e;
    }
  }
  throw new ReconnectFailedError(attempt - 1, lastError);
}
