import { b64urlDecode, b64urlEncode, sha256, utf8 } from '@wmp/jcs-signing';
import { MlsError } from '@wmp/jsonrpc-envelope';
import { inspectMessage, type MlsMessageInfo } from '@wmp/mls-bridge';

/**
 * Why the relay refused an MLS message: `data.reason` of its -31004 answer. The relay reads only
 * the clear header of MLS messages (mls-bridge `inspectMessage`), never a key.
 */
export type RelayMlsReason =
  /** Not an MLSMessage, or not the kind the method carries (a commit, a Welcome, a GroupInfo). */
  | 'malformed'
  /** The message names another MLS group than the session's. */
  | 'wrong_group'
  /** A commit not made in the group's current epoch: another commit won it (`data.epoch` is current). */
  | 'epoch_conflict'
  /** `wmp.epoch` in the clear is not the epoch inside the MLS message. */
  | 'epoch_mismatch'
  /** An application message from an epoch the group has not reached (`data.epoch` is current). */
  | 'unknown_epoch'
  /** An application message from an epoch older than members keep keys for (`data.epoch` is current). */
  | 'epoch_too_old'
  /** No `wmp.mls.group.create` for this session yet. */
  | 'unknown_group'
  /** The session already has another MLS group. */
  | 'group_exists';

/** -31004 with `data.reason` (and `epoch`, `group_id` where they help the caller recover). */
export function mlsRefusal(reason: RelayMlsReason, extra: Record<string, unknown> = {}): InstanceType<typeof MlsError> {
  return new MlsError({ reason, ...extra });
}

/** `inspectMessage`, with every decoding failure as the relay's `malformed`. */
export function inspect(text: unknown): MlsMessageInfo {
  if (typeof text !== 'string') throw mlsRefusal('malformed');
  try {
    return inspectMessage(text);
  } catch {
    throw mlsRefusal('malformed');
  }
}

/** A commit (private or public message): its group and the epoch it was made in. */
export function commitOf(text: string): { groupId: string; epoch: number } {
  const info = inspect(text);
  if (info.contentType !== 'commit' || info.groupId === undefined || info.epoch === undefined) {
    throw mlsRefusal('malformed');
  }
  return { groupId: info.groupId, epoch: info.epoch };
}

/** A Welcome (its content is encrypted to the joiner; only its kind is checked). */
export function checkWelcome(text: string): void {
  if (inspect(text).wireformat !== 'welcome') throw mlsRefusal('malformed');
}

/** An application message (a private message): its group and epoch. */
export function applicationOf(text: unknown): { groupId: string; epoch: number } {
  const info = inspect(text);
  if (info.wireformat !== 'private_message' || info.contentType !== 'application') throw mlsRefusal('malformed');
  return { groupId: info.groupId!, epoch: info.epoch! };
}

/** A GroupInfo: its group and epoch. */
export function groupInfoOf(text: string): { groupId: string; epoch: number } {
  const info = inspect(text);
  if (info.wireformat !== 'group_info') throw mlsRefusal('malformed');
  return { groupId: info.groupId!, epoch: info.epoch! };
}

/** A group id in the one spelling `inspectMessage` uses (base64url, no padding). */
export function canonicalGroupId(text: string): string {
  try {
    return b64urlEncode(b64urlDecode(text));
  } catch {
    throw mlsRefusal('malformed');
  }
}

/** SHA-256 (base64url) of a text: names a commit without keeping it. */
export function digest(text: string): string {
  return b64urlEncode(sha256(utf8(text)));
}
