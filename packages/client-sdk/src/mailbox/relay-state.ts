import type { ClientStore } from '../store/store.js';

/** Per relay, where the store keeps the cursor and the acknowledgements not yet sent. */
export const RELAY_STATE_PREFIX = 'mailbox/relay/';
/** Acknowledgements kept for a relay that does not answer; older ones are dropped (their events expire anyway). */
export const MAX_PENDING_ACKS = 5000;

/** What the mailbox remembers of one of its boxes. */
export interface RelayState {
  /** The last seq handed over or skipped: the next fetch asks for events after it. */
  readonly after: number;
  /** Event ids handled but not yet acknowledged with `POST /delivered`. */
  readonly ack: readonly string[];
}

const EMPTY: RelayState = Object.freeze({ after: 0, ack: Object.freeze([]) as readonly string[] });

export async function loadRelayState(store: ClientStore, relay: string): Promise<RelayState> {
  const text = await store.get(RELAY_STATE_PREFIX + relay);
  if (text === undefined) return EMPTY;
  try {
    const v = JSON.parse(text) as Partial<RelayState>;
    const after = Number.isSafeInteger(v.after) && (v.after as number) >= 0 ? (v.after as number) : 0;
    const ack = Array.isArray(v.ack) ? v.ack.filter((id): id is string => typeof id === 'string') : [];
    return { after, ack };
  } catch {
    // A damaged record: fetch again from the start; deduplication hides what was handed over.
    return EMPTY;
  }
}

export async function saveRelayState(store: ClientStore, relay: string, state: RelayState): Promise<void> {
  const ack = state.ack.length > MAX_PENDING_ACKS ? state.ack.slice(-MAX_PENDING_ACKS) : state.ack;
  await store.set(RELAY_STATE_PREFIX + relay, JSON.stringify({ after: state.after, ack }));
}
