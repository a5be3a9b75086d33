import { ConnectionClosedError, Peer, type Transport } from '@wmp/session';
import { HttpTransportError, type ReconnectPolicy, reconnect } from '@wmp/transports';
import { WmpClientError } from './errors.js';
import type { ConnectionState, StateChange } from './types.js';

export interface ConnectionOptions {
  /** How to reconnect after a drop; undefined: give up at the first one. */
  readonly policy: ReconnectPolicy | undefined;
  /** Calls waiting for the connection at once. */
  readonly maxWaitingCalls: number;
  readonly requestTimeoutMs: number;
  readonly maxPendingRequests: number;
  /** A new, unstarted transport to the relay. */
  readonly transport: () => Transport;
  /** Readies a new connection before it starts (its notification handlers). */
  readonly prepare: (peer: Peer) => void;
  /** Resumes or opens the sessions on a started connection; a rejection fails the attempt. */
  readonly establish: (peer: Peer) => Promise<void>;
  /** Every state change but the last (`closed`: the client tells it once it has closed). */
  readonly onState: (change: StateChange) => void;
  /** The connection dropped; reconnecting follows. */
  readonly onDrop: () => void;
  /** The connection is gone for good: no policy, or every attempt failed. */
  readonly onGiveUp: (error: unknown) => void;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The client's connection to the relay, as a state machine: `connecting` -> `connected` <->
 * `reconnecting` -> `closed`. A drop (the connection closes; over HTTP, the event stream fails)
 * is retried with `reconnect` on the client's policy, each attempt dialing, starting and
 * setting up the sessions; calls meanwhile wait for it.
 */
export class Connection {
  readonly #options: ConnectionOptions;
  readonly #waiters = new Set<Waiter>();
  readonly #abort = new AbortController();
  #state: ConnectionState = 'connecting';
  #peer: Peer | undefined;
  /** The connection being set up (closed by `stop` too). */
  #dialing: Peer | undefined;
  #failure: unknown;

  constructor(options: ConnectionOptions) {
    this.#options = options;
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** The live connection (undefined while there is none). */
  get peer(): Peer | undefined {
    return this.#peer;
  }

  /** The first connection; rejects when it fails (it is not retried). */
  async open(): Promise<void> {
    await this.#attempt();
    this.#connected();
  }

  /** Resolves once connected; rejects once closed, when `signal` aborts, or when too many wait. */
  whenConnected(signal?: AbortSignal): Promise<void> {
    if (this.#state === 'connected') return Promise.resolve();
    if (this.#state === 'closed') return Promise.reject(this.#failure ?? new ConnectionClosedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#waiters.size >= this.#options.maxWaitingCalls) {
      return Promise.reject(new WmpClientError('ERR_CLIENT_TOO_MANY_WAITING'));
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => waiter.reject(signal?.reason);
      const cleanup = () => {
        this.#waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        resolve: () => {
          cleanup();
          resolve();
        },
        reject: (e) => {
          cleanup();
          reject(e);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The connection under `peer` is gone: reconnect (or, without a policy, give up). */
  lost(peer: Peer, error: unknown): void {
    if (peer !== this.#peer || this.#state === 'closed') return;
    this.#peer = undefined;
    this.#options.onDrop();
    void peer.close().catch(() => undefined);
    const policy = this.#options.policy;
    if (!policy) {
      this.#options.onGiveUp(error);
      return;
    }
    this.#setState('reconnecting', { error });
    void this.#reconnect(policy);
  }

  /**
   * Closed for good: waiting calls reject with `error`, reconnecting stops. Returns the state it
   * was in and the live connection, which the caller may still use before `release`.
   */
  stop(error: unknown): { readonly previous: ConnectionState; readonly peer: Peer | undefined } {
    const previous = this.#state;
    this.#state = 'closed';
    this.#failure = error;
    this.#abort.abort(error);
    for (const w of [...this.#waiters]) w.reject(error);
    const peer = this.#peer;
    this.#peer = undefined;
    return { previous, peer };
  }

  /** Closes what `stop` left: the connection it returned, and one being set up. */
  async release(peer: Peer | undefined): Promise<void> {
    await peer?.close().catch(() => undefined);
    await this.#dialing?.close().catch(() => undefined);
  }

  /** One connection attempt: dial, start, set up the sessions. */
  async #attempt(): Promise<void> {
    const peer = this.#dial();
    this.#dialing = peer;
    try {
      await peer.start();
      await this.#options.establish(peer);
    } catch (e) {
      await peer.close().catch(() => undefined);
      throw e;
    } finally {
      this.#dialing = undefined;
    }
    if (this.#state === 'closed') {
      await peer.close().catch(() => undefined);
      throw this.#failure ?? new ConnectionClosedError();
    }
    this.#peer = peer;
    peer.onclose = () => this.lost(peer, new ConnectionClosedError());
    if (peer.closed) {
      // It dropped before `onclose` was set: fail this attempt so that reconnecting dials again.
      this.#peer = undefined;
      throw new ConnectionClosedError();
    }
  }

  #dial(): Peer {
    const transport = this.#options.transport();
    const peer = new Peer(transport, {
      requestTimeoutMs: this.#options.requestTimeoutMs,
      maxPendingRequests: this.#options.maxPendingRequests,
    });
    this.#options.prepare(peer);
    // HTTP has no connection to lose: a failing event stream (the relay went away, or no longer
    // knows this HTTP session) is how a drop shows. Reconnecting resumes and replays.
    transport.onerror = (error) => {
      if (!(error instanceof HttpTransportError)) return;
      if (peer === this.#dialing) void peer.close().catch(() => undefined);
      else this.lost(peer, error);
    };
    return peer;
  }

  async #reconnect(policy: ReconnectPolicy): Promise<void> {
    try {
      await reconnect(() => this.#attempt(), policy, {
        signal: this.#abort.signal,
        onRetry: ({ attempt, delayMs, error }) =>
          this.#setState('reconnecting', { attempt, delayMs, ...(error === undefined ? {} : { error }) }),
      });
    } catch (e) {
      if (this.#state !== 'closed') this.#options.onGiveUp(e);
      return;
    }
    this.#connected();
  }

  #connected(): void {
    this.#setState('connected');
    for (const w of [...this.#waiters]) w.resolve();
  }

  #setState(state: ConnectionState, extra: Omit<StateChange, 'state' | 'previous'> = {}): void {
    if (this.#state === 'closed') return;
    const previous = this.#state;
    this.#state = state;
    this.#options.onState({ state, previous, ...extra });
  }
}
