import type { AppendResult } from '../../storage/contracts/queue-store.js';
import type { RoutedMessage } from './routed-message.js';

/** What an outbox entry records of the message it carries (its statuses name the sender). */
export interface OutboxEntry {
  readonly id: string;
  readonly sender: string;
  readonly notify: boolean;
  /** The message is under evidence (its forward and its refusal are recorded). */
  readonly evidence: boolean;
  readonly expiresAt: number;
  /** A session routed through the peer and us that the message belongs to: the peer gets it naming that session. */
  readonly session?: string | undefined;
}

/**
 * Recipients at home at another relay, as routing sees them (docs/architecture.md, "Federation"):
 * routing defines what it needs, federation (`Federation`) provides it, so routing never imports
 * the room above it. Absent when federation is off.
 */
export interface RemoteHomes {
  /**
   * The origin of the peer relay `recipient` goes to, or undefined when it is kept here; a lookup
   * is charged to `sender`.
   */
  remoteHomeOf(recipient: string, sender?: string): Promise<string | undefined>;
  /**
   * -31005 when the peer at `origin` does not support the message's ERDS requests, and -31009
   * when the message is under evidence and the peer offers none (before anything is stored).
   */
  checkErds(origin: string, params: Record<string, unknown>, underEvidence: boolean): Promise<void>;
  /** Appends `message` for `recipient` to the outbox of the peer at `origin`, durably. */
  append(origin: string, recipient: string, message: RoutedMessage, entry: OutboxEntry): Promise<AppendResult>;
  /** Entries were committed to the outbox of `origin`: send them. */
  kick(origin: string): void;
}
