import type { LogFields, Logger, LogLevel } from './logger.js';

/**
 * The events an operator reads in the relay's log, each at its level (docs/operations.md, "Log
 * events"): one table, so the guide and the code say the same. Their fields are kinds, codes,
 * counts and sizes: never an identity, an address or content.
 */
export const OPS_EVENTS = {
  /** An identity authenticated on a session (`kind`: hop, group), or a routed session opened (`kind`: routed); `scheme`: the identifier scheme. */
  'session.opened': 'info',
  /** A session someone authenticated on was closed or expired, or a routed session ended (`kind`). */
  'session.closed': 'info',
  /** An authentication was refused (`method`, `code`, `reason`). */
  'auth.refused': 'info',
  /** A message stored for its recipients (`recipients`: in queues here, `remote`: in peers' outboxes, `refused`: queues full). */
  'message.accepted': 'debug',
  /** A message written to a live connection of its recipient (`on`: its hop session, or the group or routed session). */
  'message.delivered': 'debug',
  /** Messages a recipient acknowledged, leaving its queue (`count`). */
  'message.acked': 'debug',
  /** The link to a peer relay is up (`peer_relay`: the peer's relay id once it said it). */
  'peer.link_up': 'info',
  /** The link to a peer relay went down (`peer_relay`); it is retried while anything waits for it. */
  'peer.link_down': 'info',
  /** A request of the OHAN box answered: publish, fetch, stream, cards... (`route`, `status`). */
  'box.request': 'debug',
} as const satisfies Readonly<Record<string, Exclude<LogLevel, 'silent'>>>;

export type OpsEvent = keyof typeof OPS_EVENTS;

/** Lines of one event per window at most; the rest are counted into the next line's `suppressed`. */
const LINES_PER_WINDOW = 100;
const WINDOW_MS = 1000;

interface Window {
  start: number;
  lines: number;
  suppressed: number;
}

/**
 * Writes the operator's events at their levels, at most 100 lines of one event per second: a
 * flood of refused logins (or of fresh identities logging in) cannot flood the log, and what was
 * left out is said, as `suppressed`, on the next line of that event.
 */
export class OpsLog {
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #windows = new Map<OpsEvent, Window>();

  constructor(logger: Logger, now: () => number = Date.now) {
    this.#logger = logger;
    this.#now = now;
  }

  event(event: OpsEvent, fields?: LogFields): void {
    const now = this.#now();
    let w = this.#windows.get(event);
    if (w === undefined) {
      w = { start: now, lines: 0, suppressed: 0 };
      this.#windows.set(event, w);
    }
    if (now - w.start >= WINDOW_MS) {
      w.start = now;
      w.lines = 0;
    }
    if (w.lines >= LINES_PER_WINDOW) {
      w.suppressed++;
      return;
    }
    w.lines++;
    const suppressed = w.suppressed;
    w.suppressed = 0;
    this.#logger[OPS_EVENTS[event]](event, suppressed === 0 ? fields : { ...fields, suppressed });
  }
}
