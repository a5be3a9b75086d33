import type { ParamsOf } from '@wmp/jsonrpc-envelope';
import type { MlsGroupRecord } from '../../storage/contracts/mls-group-store.js';
import { applicationOf, mlsRefusal } from './mls-input.js';

/**
 * Past epochs whose application messages the relay still forwards: members keep the keys of the
 * 4 epochs before their current one (ts-mls / mls-bridge default retention), so a message a
 * member sent before it processed the latest commits is still readable by the others.
 */
export const MAX_EPOCH_LAG = 4;

/**
 * Checks an encrypted `wmp.message.deliver` (core §5.2) on a session whose MLS group the relay
 * orders, from the clear header only: the ciphertext is an application message of this group,
 * `wmp.epoch` is the epoch inside it, and that epoch is the group's current one or one of the
 * `MAX_EPOCH_LAG` before it (-31004, `data.reason`, `data.epoch` = current). Without a group at
 * the relay there is nothing to compare with, and the message is forwarded as it is.
 */
export function checkEncryptedDeliver(params: ParamsOf<'wmp.message.deliver'>, group: MlsGroupRecord | undefined) {
  if (params.wmp.encrypted !== true || group === undefined) return;
  const inner = applicationOf(params.ciphertext);
  if (inner.groupId !== group.groupId) throw mlsRefusal('wrong_group', { group_id: group.groupId });
  if (params.wmp.epoch !== inner.epoch) throw mlsRefusal('epoch_mismatch');
  if (inner.epoch > group.epoch) throw mlsRefusal('unknown_epoch', { epoch: group.epoch });
  if (inner.epoch < group.epoch - MAX_EPOCH_LAG) throw mlsRefusal('epoch_too_old', { epoch: group.epoch });
}
