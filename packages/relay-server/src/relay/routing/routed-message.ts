/**
 * A routed message as stored in the queue and forwarded: a `wmp.message.deliver`, a
 * `wmp.mls.group.*` message of a group session, a `wmp.message.status` the relay kept for a
 * sender who was offline when it arose, or a `wmp.evidence.notify`; always a notification.
 */
export interface RoutedMessage {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params: { readonly wmp: { readonly session_id?: string } & Record<string, unknown> } & Record<
    string,
    unknown
  >;
}

export const STATUS_METHOD = 'wmp.message.status';
/** What the relay queues for a sender under evidence (wmp-tables §9). */
export const EVIDENCE_METHOD = 'wmp.evidence.notify';
