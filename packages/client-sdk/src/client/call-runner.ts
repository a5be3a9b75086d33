import { type RequestOptions, RequestTimeoutError, type WmpSession } from '@wmp/session';
import type { Connection } from './connection.js';
import { isConnectionLost, isSessionGone } from './failures.js';

export interface CallPolicy {
  /** Times the call is made again after the connection dropped under it. */
  readonly retries: number;
  /** Whether -31000/-31001 mean that the connection's session is gone (not an answer about a named one). */
  readonly sessionLoss: boolean;
  /** Whether a timeout counts as a dead connection (sends: their retries are deduplicated). */
  readonly timeoutIsLoss?: boolean;
  readonly signal?: AbortSignal | undefined;
}

/** A call's `signal` and `timeoutMs` as the session takes them. */
export function requestOptions(options: {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}): RequestOptions {
  return {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
}

/**
 * Runs calls on the client's sessions over its connection: once connected, on the session of
 * `target` (the client's own when undefined). When the connection drops under a call (or, with
 * `sessionLoss`, the relay no longer knows the session), the client reconnects, and the call is
 * made again up to `retries` times.
 */
export class CallRunner {
  readonly #connection: Connection;
  readonly #sessionOf: (target: string | undefined) => WmpSession;

  constructor(connection: Connection, sessionOf: (target: string | undefined) => WmpSession) {
    this.#connection = connection;
    this.#sessionOf = sessionOf;
  }

  /** Once connected, the session of `target` (`ERR_CLIENT_UNKNOWN_GROUP` when it is not held). */
  async sessionWhenConnected(target: string | undefined, signal?: AbortSignal): Promise<WmpSession> {
    await this.#connection.whenConnected(signal);
    return this.#sessionOf(target);
  }

  async run<T>(target: string | undefined, fn: (session: WmpSession) => Promise<T>, policy: CallPolicy): Promise<T> {
    const connection = this.#connection;
    for (let attempt = 0; ; attempt++) {
      policy.signal?.throwIfAborted();
      await connection.whenConnected(policy.signal);
      const session = this.#sessionOf(target);
      const peer = connection.peer!;
      try {
        return await fn(session);
      } catch (e) {
        if (connection.state === 'closed') throw e;
        const lost =
          isConnectionLost(e) ||
          (policy.sessionLoss && isSessionGone(e)) ||
          (policy.timeoutIsLoss === true && e instanceof RequestTimeoutError);
        if (lost) connection.lost(peer, e);
        if (!lost || attempt >= policy.retries) throw e;
      }
    }
  }
}
