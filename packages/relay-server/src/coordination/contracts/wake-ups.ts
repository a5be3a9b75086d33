/**
 * A wake-up: "something was committed for this recipient, read from your cursor". `seq` is the
 * committed seq when the publisher knew it (a handler whose cursor is at or past it has nothing to
 * do). `body`, when the publisher gave one, is the text committed at `seq` (a handler whose
 * cursor is at `seq - 1` may take it as read from the store). Wake-ups may be lost, merged,
 * duplicated or out of order: the store is the truth, and a node also rescans on reconnect and on
 * a slow safety poll. `note` is set for a note (`WakeUps.notify`), and then nothing else is.
 */
export type WakeHandler = (seq: number | undefined, note?: string, body?: string) => void;

/** The longest note `WakeUps.notify` carries (characters) by default; a longer one reaches nobody. */
export const MAX_WAKE_NOTE_CHARS = 16_384;

/**
 * The longest body a wake-up carries (characters) by default; with a longer one the wake-up goes
 * without it (a hint: the woken node reads the store).
 */
export const MAX_WAKE_BODY_CHARS = 16_384;

/**
 * The longest note between two nodes (`Coordination.nodes`): a routed frame passed on, which may
 * be as large as the relay's biggest message, with room for its envelope.
 */
export const MAX_NODE_NOTE_CHARS = 4 * 1024 * 1024;

/** Stops one handler (idempotent, synchronous). The last handler of a recipient unsubscribes the node. */
export type WakeUnsubscribe = () => void;

/** Bounds of the handlers one node holds. */
export interface WakeUpLimits {
  /** Handlers of one recipient on this node; default 64. */
  readonly maxPerKey?: number;
  /** Handlers on this node in total; default 1,000,000. */
  readonly max?: number;
}

export const DEFAULT_WAKE_UP_LIMITS: Required<WakeUpLimits> = { maxPerKey: 64, max: 1_000_000 };

/**
 * Cross-node wake-ups for one kind of channel (relay queues `wake:{recipient}`, box streams
 * `box:{key}`): sharded pub/sub in Redis, a bus in memory (docs/architecture.md, "Cluster
 * wake-ups").
 *
 * Order of use: `subscribe` first and await it, then read the backlog from the store; on
 * `onReconnect`, read every local subscriber's backlog again (wake-ups sent while the link was down
 * are lost); and poll slowly anyway.
 */
export interface WakeUps {
  /**
   * Wakes every handler of `recipient` on every node, this one included (its handlers are called
   * before this resolves). Call it after the write committed. Never rejects: when the backend is
   * down the local handlers are still called and the wake-up is sent again after reconnect
   * (bounded; beyond the bound the safety poll covers it). Resolves how many nodes it reached (a
   * hint: 0 when nobody listens or it could not be sent now). `body` (the text committed at `seq`)
   * goes to the other nodes' handlers with it, when it is at most the adapter's bound
   * (`MAX_WAKE_BODY_CHARS` by default) and the wake-up is sent now; never to this node's own
   * handlers, and never with a wake-up sent again after an outage.
   */
  publish(recipient: string, seq?: number, body?: string): Promise<number>;
  /**
   * Hands `note` to the handlers of `recipient` on the other nodes (never this one's), as the
   * handler's second argument: something live for the recipient's endpoints there, that needs no
   * read (a status for a sender online on another node). Best effort: not sent again after an
   * outage, lost with a node that dies holding it. Resolves how many other nodes took it; 0 when
   * none listens, the note is longer than `MAX_WAKE_NOTE_CHARS` or the backend is down (the caller
   * then does what it does for a recipient online nowhere). Never rejects.
   */
  notify(recipient: string, note: string): Promise<number>;
  /**
   * Calls `handler` for every later wake-up of `recipient`. Resolves once remote publishers reach
   * it (or at once when the backend is down: it is active after reconnect, followed by
   * `onReconnect`). Resolves undefined when a bound is reached (nothing registered).
   */
  subscribe(recipient: string, handler: WakeHandler): Promise<WakeUnsubscribe | undefined>;
  /**
   * `handler` runs after every reconnect (or restart) of the backend, once every subscription is
   * active again: the caller rescans every local subscriber's backlog. Returns its removal.
   */
  onReconnect(handler: () => void): () => void;
  /**
   * Whether this node's handlers of `recipient` hear the other nodes now: subscribed at the
   * backend, as far as this node knows, and connected. A caller that keeps copies of shared
   * state, invalidated through notes, keeps them only while this holds.
   */
  listening(recipient: string): boolean;
  /** Drops every handler of this node. */
  close(): Promise<void>;
}
