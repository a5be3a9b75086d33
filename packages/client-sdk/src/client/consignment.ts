// Registered delivery from the client's side (core §3.3, §3.5, docs/wmp-profile.md
// "Consignment"): what a send asks of the recipient's relay (consignment mode, assurance level,
// scheduled delivery, sending for a principal), and the notices of consented messages with the
// acceptance or refusal the recipient answers them with.
import { isRecord, str } from './json-values.js';

/** `basic` hands the content over on delivery; `consented` after the recipient accepts; `consented_signed` after a signed acceptance. */
export type ConsignmentMode = 'basic' | 'consented' | 'consented_signed';

/** The levels a recipient's relay rates authentication with (core §3.5.1). */
export type AssuranceLevel = 'low' | 'substantial' | 'high';

/** A `wmp.sender_delegate` authorization (core §3.3): a mandate JWS (`signMandate` of `@wmp/jcs-signing`) or an SD-JWT VC presentation. */
export interface DelegateAuthorization {
  readonly type: 'mandate' | 'verifiable_presentation';
  readonly credential: string;
}

/** Sending as a delegate for `principal` (the client's identity is the delegate). */
export interface OnBehalfOf {
  readonly principal: string;
  readonly authorization: DelegateAuthorization;
}

/** What a send asks of the recipient's relay. */
export interface RegisteredSendOptions {
  /** Default the relay's (`basic`). */
  readonly consignmentMode?: ConsignmentMode;
  /** The recipient never gets the content when it authenticated below this. */
  readonly recipientAssuranceLevel?: AssuranceLevel;
  /** `wmp.deliver_after`: the relay holds the message until then. */
  readonly deliverAfter?: Date | string;
  /** A subject the notice of a consented message repeats (the content stays with the relay). */
  readonly subject?: string;
  /** Send for a principal: `wmp.sender` is it, `wmp.sender_delegate` this client with the authorization. */
  readonly onBehalfOf?: OnBehalfOf;
}

/** The content fields of a `wmp.message.deliver` for these options. */
export function registeredContent(o: RegisteredSendOptions): Record<string, unknown> {
  return {
    ...(o.consignmentMode ? { consignment_mode: o.consignmentMode } : {}),
    ...(o.recipientAssuranceLevel ? { recipient_assurance_level: o.recipientAssuranceLevel } : {}),
    ...(o.subject !== undefined ? { subject: o.subject } : {}),
  };
}

/** The `wmp` fields of a `wmp.message.deliver` for these options (`delegate`: this client's id). */
export function registeredMeta(o: RegisteredSendOptions, delegate: string): Record<string, unknown> {
  // To the millisecond: a time cut to the second would fall due before the one asked for.
  const after = o.deliverAfter instanceof Date ? o.deliverAfter.toISOString() : o.deliverAfter;
  return {
    ...(after ? { deliver_after: after } : {}),
    ...(o.onBehalfOf
      ? {
          sender: o.onBehalfOf.principal,
          sender_delegate: { id: delegate, authorization: { ...o.onBehalfOf.authorization } },
        }
      : {}),
  };
}

/**
 * A `wmp.message.notice`: the recipient's relay holds a consented message and says who sent it
 * and what it is, never its content. `accept` (signed for `consented_signed`) or `reject` answers it.
 */
export interface ConsignmentNotice {
  /** The held message's id: what `accept` and `reject` name. */
  readonly messageId: string;
  /** The sender (the principal, when a delegate sent it). */
  readonly from: string;
  readonly senderDelegate: string | undefined;
  readonly mode: ConsignmentMode;
  /** The content's hash (what a signed acceptance covers). */
  readonly contentHash: string;
  readonly size: number | undefined;
  readonly contentType: string | undefined;
  readonly messageType: string | undefined;
  readonly subject: string | undefined;
  /** Whom it is for (this client, or the principal it is a delegate of). */
  readonly recipient: string | undefined;
  readonly recipientAssuranceLevel: string | undefined;
  /** The relay drops it, unanswered, after this. */
  readonly expiresAt: string | undefined;
  /** The relay's id of the notice itself (acknowledged once the listeners had it). */
  readonly noticeId: string | undefined;
}

const MODES: ReadonlySet<string> = new Set(['basic', 'consented', 'consented_signed']);

/** A notice as the application sees it; undefined when it names no message, sender, mode or hash. */
export function noticeOf(params: Record<string, unknown>): ConsignmentNotice | undefined {
  const messageId = str(params.message_id);
  const from = str(params.sender);
  const mode = str(params.consignment_mode);
  const contentHash = str(params.content_hash);
  if (messageId === undefined || from === undefined || mode === undefined || !MODES.has(mode) || !contentHash) {
    return undefined;
  }
  const delegate = isRecord(params.sender_delegate) ? str(params.sender_delegate.id) : undefined;
  return {
    messageId,
    from,
    senderDelegate: delegate,
    mode: mode as ConsignmentMode,
    contentHash,
    size: typeof params.size === 'number' ? params.size : undefined,
    contentType: str(params.content_type),
    messageType: str(params.message_type),
    subject: str(params.subject),
    recipient: str(params.recipient),
    recipientAssuranceLevel: str(params.recipient_assurance_level),
    expiresAt: str(params.expires_at),
    noticeId: isRecord(params.wmp) ? str(params.wmp.message_id) : undefined,
  };
}

/** How to accept a consented message. */
export interface AcceptOptions {
  /** The content hash the acceptance covers (a notice's `contentHash`); required for `consented_signed`. */
  readonly contentHash?: string;
  /** Sign the acceptance (the receipt of `consented_signed`); default: when the notice's mode is `consented_signed`. */
  readonly sign?: boolean;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

/** The `wmp.message.accept` params and whether to sign them, for a notice or a bare id. */
export function acceptRequest(
  what: ConsignmentNotice | string,
  options: AcceptOptions,
): { params: Record<string, unknown>; sign: boolean } {
  const notice = typeof what === 'string' ? undefined : what;
  const contentHash = options.contentHash ?? notice?.contentHash;
  return {
    params: {
      message_id: typeof what === 'string' ? what : what.messageId,
      ...(contentHash ? { content_hash: contentHash } : {}),
    },
    sign: options.sign ?? notice?.mode === 'consented_signed',
  };
}
