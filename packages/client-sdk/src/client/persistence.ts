import type { WmpSession } from '@wmp/session';
import type { ClientStore } from '../store/store.js';
import { parseState, type SavedSession, type SavedState, StateWriter } from './saved-state.js';
import { SeenIds } from './seen-ids.js';

/** A live session as the store keeps it; undefined while it has no resumption token. */
export function savedSession(session: WmpSession): SavedSession | undefined {
  const resumptionToken = session.resumptionToken;
  if (!resumptionToken) return undefined;
  return {
    id: session.id,
    version: session.version,
    resumptionToken,
    ...(session.capabilities ? { capabilities: session.capabilities } : {}),
    ...(session.security ? { security: session.security } : {}),
    ...(session.responder ? { responder: session.responder } : {}),
  };
}

export interface PersistenceOptions {
  readonly store: ClientStore;
  /** The relay's origin and the identity: one state per pair. */
  readonly origin: string;
  readonly did: string;
  readonly maxGroups: number;
  readonly maxSeenIds: number;
  /** A store write failed. */
  readonly report: (error: unknown) => void;
}

/**
 * What a client keeps in its store, under `client/<origin>/<did>/`: the sessions with their
 * resumption tokens, the registration, the last received id (`session`), and the dedupe ids
 * (`seen/`). Anything unreadable is started afresh.
 */
export class Persistence {
  /** The message ids already handed over. */
  readonly seen: SeenIds;
  /** What the store had when the client started. */
  readonly loaded: SavedState;
  readonly #writer: StateWriter;
  readonly #report: (error: unknown) => void;

  private constructor(seen: SeenIds, loaded: SavedState, writer: StateWriter, report: (error: unknown) => void) {
    this.seen = seen;
    this.loaded = loaded;
    this.#writer = writer;
    this.#report = report;
  }

  static async load(options: PersistenceOptions): Promise<Persistence> {
    const { store } = options;
    const prefix = `client/${options.origin}/${options.did}/`;
    const [seen, loaded] = await Promise.all([
      SeenIds.load(store, `${prefix}seen/`, options.maxSeenIds),
      store.get(`${prefix}session`).then((text) => parseState(text, options.maxGroups)),
    ]);
    const writer = new StateWriter(store, `${prefix}session`, options.report);
    return new Persistence(seen, loaded, writer, options.report);
  }

  /** Stores `state` (in the background; a failure is reported). */
  save(state: SavedState): void {
    void this.#writer.write(state);
  }

  /** The client closed: what it keeps is written (`state()`), or with `endSession` forgotten. */
  async finish(state: () => SavedState, endSession: boolean): Promise<void> {
    await this.seen.flush();
    if (endSession) {
      await this.#writer.clear().catch((e: unknown) => this.#report(e));
      return;
    }
    this.save(state());
    await this.#writer.flush();
  }
}
