// What the relay witnesses in registered delivery that an evidence record is made of (wmp-tables
// §9): the consignment steps at the recipient's relay, with the delegates on either side. The
// relay calls `witness` and goes on; an evidence recorder (signing, storing, notifying) plugs in
// here. The default records nothing.

/** The consignment events of wmp-tables §9 this relay raises. */
export type WitnessedEventType =
  | 'notification_sent'
  | 'acceptance_confirmed'
  | 'acceptance_rejected'
  | 'acceptance_expired'
  | 'delivery_failed';

export interface WitnessedEvent {
  readonly eventType: WitnessedEventType;
  /** The consigned message's id (`original_message_id`). */
  readonly messageId: string;
  /**
   * `original_sender`: the message's `wmp.sender` (the principal, when a delegate sent it); for
   * `acceptance_expired`, who sent it (the message itself is gone with its expiry).
   */
  readonly sender: string;
  /** `original_sender_delegate`, when a delegate sent it. */
  readonly senderDelegate?: string;
  /** `original_recipient`. */
  readonly recipient: string;
  /** `original_recipient_delegate`: the delegate that accepted or rejected for the recipient. */
  readonly recipientDelegate?: string;
  /** `event_reason.code` (wmp-tables §9): `insufficient_assurance`, `recipient_rejected`, `timeout`. */
  readonly reason?: string;
  /** The recipient's signed acceptance (`consented_signed`): the accept's `wmp.signature`. */
  readonly receipt?: string;
  /** The consignment mode of the message. */
  readonly consignmentMode?: string;
  /** ms since the epoch. */
  readonly at: number;
}

/** Where witnessed events go (`RegisteredDeliveryConfig.evidence`). Must not throw or block. */
export interface RegisteredEvidenceHooks {
  witness(event: WitnessedEvent): void;
}

/** Records nothing. */
export const noEvidenceHooks: RegisteredEvidenceHooks = Object.freeze({ witness() {} });
