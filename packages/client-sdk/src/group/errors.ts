import { ErrorCode, WmpError } from '@wmp/jsonrpc-envelope';
import { ClientSdkError } from '../errors.js';

/** Why a `Group` call failed, or why an incoming group message was not handed over. */
export type GroupErrorCode =
  /** No group of this session in the store, or the client no longer holds the session. */
  | 'ERR_GROUP_UNKNOWN'
  /** The identity given is not the client's. */
  | 'ERR_GROUP_IDENTITY'
  /** This member has not joined the MLS group yet (no Welcome for it was processed). */
  | 'ERR_GROUP_NOT_JOINED'
  /** This member was removed from the MLS group: it can neither send nor read. */
  | 'ERR_GROUP_REMOVED'
  /** `close()` was called. */
  | 'ERR_GROUP_CLOSED'
  /** The identity is not a participant of the relay's group session (fixed when it was created). */
  | 'ERR_GROUP_NOT_PARTICIPANT'
  /** The relay holds no key package for the identity: it must publish some first. */
  | 'ERR_GROUP_NO_KEY_PACKAGE'
  /** The key package the relay handed out is not a valid one of that identity. */
  | 'ERR_GROUP_BAD_KEY_PACKAGE'
  /** Too many unused key packages kept locally; wait until some are used. */
  | 'ERR_GROUP_TOO_MANY_KEY_PACKAGES'
  /** Nobody to send to (no other member). */
  | 'ERR_GROUP_NO_RECIPIENTS'
  /** MLS refused the operation (`reason`: mls-bridge's, e.g. `already_member`, `not_a_member`). */
  | 'ERR_GROUP_MLS'
  /** Other members' commits kept winning the epoch; `maxCommitRetries` were used up. */
  | 'ERR_GROUP_COMMIT_CONFLICT'
  /** The group could not catch up with the epoch the relay is in (a commit is missing). */
  | 'ERR_GROUP_OUT_OF_SYNC'
  /** An incoming message could not be read (`reason`: mls-bridge's, e.g. `decrypt_failed`). */
  | 'ERR_GROUP_UNREADABLE'
  /** A Welcome for this member could not be joined (`reason`: mls-bridge's). */
  | 'ERR_GROUP_WELCOME'
  /** The stored group state is damaged or belongs to another identity. */
  | 'ERR_GROUP_STATE'
  /** An application listener of the group threw. */
  | 'ERR_GROUP_LISTENER';

const MESSAGES: Readonly<Record<GroupErrorCode, string>> = Object.freeze({
  ERR_GROUP_UNKNOWN: 'unknown group',
  ERR_GROUP_IDENTITY: 'the identity is not the client identity',
  ERR_GROUP_NOT_JOINED: 'not a member of the group yet',
  ERR_GROUP_REMOVED: 'removed from the group',
  ERR_GROUP_CLOSED: 'group closed',
  ERR_GROUP_NOT_PARTICIPANT: 'not a participant of the group session',
  ERR_GROUP_NO_KEY_PACKAGE: 'no key package for this identity',
  ERR_GROUP_BAD_KEY_PACKAGE: 'invalid key package',
  ERR_GROUP_TOO_MANY_KEY_PACKAGES: 'too many unused key packages',
  ERR_GROUP_NO_RECIPIENTS: 'no other member to send to',
  ERR_GROUP_MLS: 'MLS refused the operation',
  ERR_GROUP_COMMIT_CONFLICT: 'commit conflict retries exhausted',
  ERR_GROUP_OUT_OF_SYNC: 'group out of sync with the relay',
  ERR_GROUP_UNREADABLE: 'unreadable group message',
  ERR_GROUP_WELCOME: 'welcome could not be joined',
  ERR_GROUP_STATE: 'damaged group state',
  ERR_GROUP_LISTENER: 'a group listener failed',
});

/**
 * A failure of a `Group`: a stable `code`, a fixed message that carries no peer data, and for
 * MLS refusals the stable `reason` of mls-bridge or of the relay (`data.reason` of -31004).
 */
export class GroupError extends ClientSdkError {
  declare readonly code: GroupErrorCode;
  readonly reason: string | undefined;
  constructor(code: GroupErrorCode, options: { reason?: string | undefined; cause?: unknown } = {}) {
    super(code, MESSAGES[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GroupError';
    this.reason = options.reason;
  }
}

/** The -31004 `data.reason` of an MLS refusal (mls-bridge's, or the relay's answer), if it is one. */
export function mlsReasonOf(error: unknown): string | undefined {
  if (!(error instanceof WmpError) || error.code !== ErrorCode.MlsError) return undefined;
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** The `data.epoch` of a relay's -31004 refusal (the group's current epoch), if it carries one. */
export function relayEpochOf(error: unknown): number | undefined {
  if (!(error instanceof WmpError)) return undefined;
  const epoch = (error.data as { epoch?: unknown } | undefined)?.epoch;
  return typeof epoch === 'number' && Number.isSafeInteger(epoch) && epoch >= 0 ? epoch : undefined;
}

/** An mls-bridge refusal of one of our own operations as a `GroupError`; anything else unchanged. */
export function fromMls(error: unknown): unknown {
  const reason = mlsReasonOf(error);
  if (reason === undefined || error instanceof GroupError) return error;
  if (reason === 'removed') return new GroupError('ERR_GROUP_REMOVED', { reason, cause: error });
  if (reason === 'invalid_state') return new GroupError('ERR_GROUP_STATE', { reason, cause: error });
  if (reason === 'invalid_identity') return new GroupError('ERR_GROUP_IDENTITY', { reason, cause: error });
  return new GroupError('ERR_GROUP_MLS', { reason, cause: error });
}
