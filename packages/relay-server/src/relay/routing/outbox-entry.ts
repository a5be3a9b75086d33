/**
 * The outbox of a peer relay is a queue of the queue store under this recipient key
 * (docs/federation-profile.md, "Store and forward": the same stores on memory, SQLite and
 * PostgreSQL), keyed by the peer's origin: the one thing known about a home relay before it was
 * ever reached.
 */
export function outboxKey(origin: string): string {
  return `${OUTBOX_PREFIX}${origin}`;
}

/** What every outbox key starts with (`QueueStore.recipientsWithPrefix` finds them by it). */
export const OUTBOX_PREFIX = 'relay:';

export function isOutboxKey(recipient: string): boolean {
  return recipient.startsWith(OUTBOX_PREFIX);
}

/** The peer origin of an outbox key. */
export function originOfOutboxKey(key: string): string {
  return key.slice(OUTBOX_PREFIX.length);
}

/**
 * One entry per message and recipient (a message's statuses are per recipient): its id is the
 * recipient, a newline and the message id (message ids never hold a newline: inbound ones are
 * checked).
 */
export function outboxEntryId(recipient: string, messageId: string): string {
  return `${recipient}\n${messageId}`;
}

/** The recipient and message id of an outbox entry id. */
export function parseOutboxEntryId(id: string): { readonly recipient: string; readonly messageId: string } {
  const at = id.lastIndexOf('\n');
  return { recipient: id.slice(0, at), messageId: id.slice(at + 1) };
}
