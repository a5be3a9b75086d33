// The params of `wmp.message.status` as the relay builds them (core §5.3.1): routing raises
// them, the status notifier sends them, federation passes them between relays.

export type MessageStatus = 'queued' | 'delivered' | 'expired' | 'dropped';

/** Every status there is: what a status from another node or a peer relay must be one of. */
export const STATUSES: ReadonlySet<string> = new Set<MessageStatus>(['queued', 'delivered', 'expired', 'dropped']);

export interface StatusParams {
  readonly message_id: string;
  readonly status: MessageStatus;
  readonly recipient?: string;
  readonly queued_until?: string;
  readonly reason?: string;
  /** Why a `dropped` came about when a relay downstream refused the message: its error code and `data.reason`. */
  readonly data?: StatusDetail;
  /** The sender a status is about, when it goes back to the peer relay the sender came through. */
  readonly sender?: string;
}

/** A downstream refusal as a status carries it: a JSON-RPC code, and a `data.reason` token. */
export interface StatusDetail {
  readonly code: number;
  readonly reason?: string;
}

/** A `data.reason` fit to pass on: a short snake_case token (nothing a peer could smuggle through). */
const REASON_TOKEN = /^[a-z][a-z0-9_]{0,63}$/;

/** The detail of a refusal from its code and `data` (as a peer answered, or as a peer's status said). */
export function statusDetailOf(code: unknown, data: unknown): StatusDetail | undefined {
  if (!Number.isSafeInteger(code)) return undefined;
  const reason = (data as { reason?: unknown } | null | undefined)?.reason;
  return { code: code as number, ...(typeof reason === 'string' && REASON_TOKEN.test(reason) ? { reason } : {}) };
}
