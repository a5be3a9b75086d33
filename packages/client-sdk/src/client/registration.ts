import type { Peer, WmpSession } from '@wmp/session';
import { isConnectionLost, isSessionGone } from './failures.js';
import { isRecord } from './json-values.js';

/** Re-register when less than this is left of the registration. */
const REGISTER_MARGIN_MS = 60_000;
/** Fallback length of a registration whose answer names no ttl. */
const DEFAULT_REGISTRATION_S = 3600;

export interface RegistrationOptions {
  /** `WmpClientOptions.register`: undefined registers when the session negotiated `relay`. */
  readonly enabled: boolean | undefined;
  /** Until when (ms) the stored registration runs. */
  readonly until: number | undefined;
  /** The client's session and connection, while connected. */
  readonly live: () => { readonly main: WmpSession; readonly peer: Peer } | undefined;
  /** The connection under a refresh dropped. */
  readonly lost: (peer: Peer, error: unknown) => void;
  /** `until` changed (to be stored). */
  readonly changed: () => void;
  readonly report: (error: unknown) => void;
}

/**
 * `wmp.relay.register`, which has the relay route to this identity and replay what it queued:
 * made when a connection needs it, and again before it runs out.
 */
export class Registration {
  readonly #options: RegistrationOptions;
  #until: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(options: RegistrationOptions) {
    this.#options = options;
    this.#until = options.until;
  }

  /** Until when (ms) the relay routes to us without a new register. */
  get until(): number | undefined {
    return this.#until;
  }

  /** A new session at the relay: it is not registered yet. */
  reset(): void {
    this.#until = undefined;
  }

  /**
   * A connection was set up on `main`. A resume keeps the registration. A new session needs one;
   * so does a connection with group sessions, whose messages the relay skipped while they were
   * not yet resumed on it (a register replays everything unacknowledged); and one near the end
   * of its registration.
   */
  async connected(main: WmpSession, situation: { readonly fresh: boolean; readonly groups: boolean }): Promise<void> {
    if (!(this.#options.enabled ?? 'relay' in main.capabilities)) return;
    const ending = (this.#until ?? 0) < Date.now() + REGISTER_MARGIN_MS;
    if (situation.fresh || situation.groups || ending) await this.register(main);
    else this.#schedule();
  }

  async register(main: WmpSession): Promise<void> {
    const result = await main.request('wmp.relay.register', {});
    const ttl =
      isRecord(result) && typeof result.ttl === 'number' && result.ttl > 0 ? result.ttl : DEFAULT_REGISTRATION_S;
    this.#until = Date.now() + ttl * 1000;
    this.#schedule();
    this.#options.changed();
  }

  /** Registers again if registered (a joined group's backlog is replayed); a failure is reported. */
  async renew(main: WmpSession): Promise<void> {
    if (this.#until !== undefined) await this.register(main).catch((e: unknown) => this.#options.report(e));
  }

  /** No refresh until the next connection. */
  pause(): void {
    clearTimeout(this.#timer);
  }

  /** No refresh ever again. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** Registers again before the registration runs out (at 80% of what is left). */
  #schedule(): void {
    clearTimeout(this.#timer);
    if (this.#until === undefined || this.#stopped) return;
    const delay = Math.max(1000, Math.floor((this.#until - Date.now()) * 0.8));
    this.#timer = setTimeout(() => {
      const live = this.#options.live();
      if (!live) return;
      this.register(live.main).catch((e: unknown) => {
        if (isConnectionLost(e) || isSessionGone(e)) this.#options.lost(live.peer, e);
        else this.#options.report(e);
      });
    }, delay);
    (this.#timer as { unref?: () => void }).unref?.();
  }
}
