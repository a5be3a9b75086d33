import { InvalidParamsError } from '@wmp/jsonrpc-envelope';

/** What a sender may choose as a deliver's `wmp.message_id`: 1 to 256 visible ASCII characters. */
const SENDER_MESSAGE_ID = /^[!-~]{1,256}$/;

/**
 * The `wmp.message_id` a sender chose for a deliver sent as a notification (docs/wmp-profile.md):
 * the relay routes it under that id, so that every status names what the sender knows. Undefined
 * when it chose none; -32602 for one that is not 1 to 256 visible ASCII characters.
 */
export function senderMessageId(wmp: { readonly message_id?: unknown }): string | undefined {
  const id = wmp.message_id;
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || !SENDER_MESSAGE_ID.test(id)) {
    throw new InvalidParamsError({ reason: 'wmp.message_id: 1 to 256 visible ASCII characters' });
  }
  return id;
}

/** The sender's well-formed `wmp.message_id` of a refused notification's params, if any: its `dropped` names it. */
export function refusedMessageId(params: unknown): string | undefined {
  const id = (params as { wmp?: { message_id?: unknown } } | undefined)?.wmp?.message_id;
  return typeof id === 'string' && SENDER_MESSAGE_ID.test(id) ? id : undefined;
}
