import type { Mailbox } from '../mailbox/mailbox.js';
import { WmpClientError } from './errors.js';
import type { MessageFallback } from './types.js';

type Recipient = Parameters<Mailbox['send']>[0];
type MailboxSendOptions = NonNullable<Parameters<Mailbox['send']>[2]>;

export interface MailboxFallbackOptions {
  /**
   * The recipient's card (or a record holding it): from the application's contacts, or
   * `mailbox.lookupCard(did, directory)`. Undefined: that recipient has no sealed route.
   */
  readonly cardOf: (did: string) => Recipient | undefined | Promise<Recipient | undefined>;
  /** Passed to `Mailbox.send` (`asContact`, `ttlSeconds`, ...). */
  readonly send?: MailboxSendOptions;
}

/**
 * A `MessageFallback` that seals an undelivered message into the recipient's mailboxes (OHAN),
 * for `WmpClient`'s `fallback` option: the relay keeps its queued copy, and the recipient's
 * client keeps whichever copy comes first (same `client_message_id`). Rejects with
 * `ERR_CLIENT_NO_CARD` when there is no card, or the first box's error when none took it.
 */
export function mailboxFallback(mailbox: Pick<Mailbox, 'send'>, options: MailboxFallbackOptions): MessageFallback {
  return async (message) => {
    const card = await options.cardOf(message.to);
    if (card === undefined) throw new WmpClientError('ERR_CLIENT_NO_CARD');
    const result = await mailbox.send(card, message.envelope, options.send ?? {});
    if (!result.accepted) {
      for (const outcome of result.outcomes) if (!outcome.ok) throw outcome.error;
      throw new WmpClientError('ERR_CLIENT_NO_CARD');
    }
  };
}
