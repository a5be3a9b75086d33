import type { Capabilities, Security } from '@wmp/jsonrpc-envelope';
import type { ClientStore } from '../store/store.js';

/** A session as the client keeps it between connections and runs. */
export interface SavedSession {
  readonly id: string;
  readonly version: string;
  readonly resumptionToken: string;
  readonly capabilities?: Capabilities;
  readonly security?: Security;
  /** Who the relay proved to be when the session was opened (mutual authentication). */
  readonly responder?: string;
}

export interface SavedGroup extends SavedSession {
  /** The participants as far as this client knows them (creator and listed identities). */
  readonly members: readonly string[];
}

/** Everything kept under `client/<origin>/<did>/session`. */
export interface SavedState {
  readonly v: 1;
  readonly session: SavedSession | undefined;
  /** Until when (ms) the relay routes to us without a new `wmp.relay.register`. */
  readonly registeredUntil: number | undefined;
  /** The newest message id handed to the application. */
  readonly lastReceivedId: string | undefined;
  readonly groups: readonly SavedGroup[];
}

export const EMPTY_STATE: SavedState = Object.freeze({
  v: 1,
  session: undefined,
  registeredUntil: undefined,
  lastReceivedId: undefined,
  groups: [],
});

const isString = (x: unknown): x is string => typeof x === 'string' && x.length > 0;
const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

function readSession(x: unknown): SavedSession | undefined {
  if (!isObject(x) || !isString(x.id) || !isString(x.version) || !isString(x.resumptionToken)) return undefined;
  return {
    id: x.id,
    version: x.version,
    resumptionToken: x.resumptionToken,
    ...(isObject(x.capabilities) ? { capabilities: x.capabilities as Capabilities } : {}),
    ...(isObject(x.security) ? { security: x.security as unknown as Security } : {}),
    ...(isString(x.responder) ? { responder: x.responder } : {}),
  };
}

function readGroup(x: unknown): SavedGroup | undefined {
  const session = readSession(x);
  if (!session || !isObject(x)) return undefined;
  const members = Array.isArray(x.members) ? x.members.filter(isString) : [];
  return { ...session, members };
}

/** Parses a stored state; anything unreadable counts as none (the client then starts afresh). */
export function parseState(text: string | undefined, maxGroups: number): SavedState {
  if (text === undefined) return EMPTY_STATE;
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch {
    return EMPTY_STATE;
  }
  if (!isObject(x) || x.v !== 1) return EMPTY_STATE;
  const groups = Array.isArray(x.groups)
    ? x.groups
        .map(readGroup)
        .filter((g): g is SavedGroup => g !== undefined)
        .slice(0, maxGroups)
    : [];
  return {
    v: 1,
    session: readSession(x.session),
    registeredUntil: typeof x.registeredUntil === 'number' ? x.registeredUntil : undefined,
    lastReceivedId: isString(x.lastReceivedId) ? x.lastReceivedId : undefined,
    groups,
  };
}

/**
 * Writes the latest state, one write at a time: a change made while a write runs is written
 * after it (intermediate states are skipped, never reordered).
 */
export class StateWriter {
  readonly #store: ClientStore;
  readonly #key: string;
  readonly #onError: (error: unknown) => void;
  #pending: SavedState | undefined;
  #running: Promise<void> | undefined;

  constructor(store: ClientStore, key: string, onError: (error: unknown) => void) {
    this.#store = store;
    this.#key = key;
    this.#onError = onError;
  }

  write(state: SavedState): Promise<void> {
    this.#pending = state;
    this.#running ??= this.#drain();
    return this.#running;
  }

  /** Resolves once what was written so far is stored (or failed). */
  flush(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending !== undefined) {
        const state = this.#pending;
        this.#pending = undefined;
        try {
          await this.#store.set(this.#key, JSON.stringify(state));
        } catch (e) {
          this.#onError(e);
        }
      }
    } finally {
      this.#running = undefined;
    }
  }

  async clear(): Promise<void> {
    this.#pending = undefined;
    await this.flush();
    await this.#store.delete(this.#key);
  }
}
