import type { MailboxError } from './errors.js';

/** What one relay did with a published event. */
export type PublishOutcome =
  | {
      readonly relay: string;
      readonly ok: true;
      /** `stored` now, or `duplicate`: the box already had this event. */
      readonly status: 'stored' | 'duplicate';
      readonly eventId: string;
      /** The stamp strength of the event it took (0: none). */
      readonly stampBits: number;
    }
  | { readonly relay: string; readonly ok: false; readonly error: MailboxError; readonly eventId?: string };

/** What one relay did with a published card. */
export type CardOutcome =
  | { readonly relay: string; readonly ok: true; readonly status: 'stored' | 'unchanged' }
  | { readonly relay: string; readonly ok: false; readonly error: MailboxError };

/** One relay's allow list after a change, or why it could not be changed. */
export type AllowOutcome =
  | { readonly relay: string; readonly ok: true; readonly contacts: readonly string[] }
  | { readonly relay: string; readonly ok: false; readonly error: MailboxError };
