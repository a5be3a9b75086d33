// What a member does with an incoming message before adopting anything: refuse what it cannot
// process, open an application message, summarise a commit. Pure over the ts-mls state.
import { timingSafeEqual } from '@wmp/jcs-signing';
import { MlsBridgeError } from './errors.js';
import type { DecryptedMessage, MessageHeader, ProcessedMessage } from './group-types.js';
import { identityOf } from './identity.js';
import { identityAt } from './tree.js';
import {
  type CiphersuiteImpl,
  type ClientState,
  type EpochReceiverData,
  type PrivateMessage,
  type ProposalWithSender,
  unprotectPrivateMessage,
} from './ts-mls.js';
import { epochNumber, type MlsMessageOf } from './wire.js';

/** A message opened: what it said, the state with its secret tree advanced, the keys it used up. */
export interface OpenedMessage {
  readonly message: DecryptedMessage;
  readonly next: ClientState;
  readonly consumed: readonly Uint8Array[];
}

/** The commit ts-mls reported to the incoming-message callback. */
export interface IncomingCommit {
  readonly senderLeafIndex: number | undefined;
  readonly proposals: readonly ProposalWithSender[];
}

export function headerOf(m: MlsMessageOf<'mls_private_message' | 'mls_public_message'>): MessageHeader {
  return m.wireformat === 'mls_private_message' ? m.privateMessage : m.publicMessage.content;
}

export function assertActive(state: ClientState): void {
  if (state.groupActiveState.kind !== 'active') throw new MlsBridgeError('removed');
}

/** Refuses, before any key is touched, what this member cannot or must not process now. */
export function checkHeader(state: ClientState, commitPending: boolean, h: MessageHeader): void {
  const ours = state.groupContext;
  if (h.groupId.length !== ours.groupId.length || !timingSafeEqual(h.groupId, ours.groupId)) {
    throw new MlsBridgeError('wrong_group');
  }
  assertActive(state);
  if (h.epoch > ours.epoch) {
    // Our own commit was accepted and others already moved on: confirm it first, then retry.
    throw new MlsBridgeError(commitPending && h.epoch === ours.epoch + 1n ? 'commit_pending' : 'unknown_epoch');
  }
  if (h.contentType === 'application') {
    if (h.epoch < ours.epoch && !state.historicalReceiverData.has(h.epoch)) {
      throw new MlsBridgeError('epoch_too_old');
    }
    return;
  }
  if (h.epoch < ours.epoch) throw new MlsBridgeError('epoch_too_old');
  // A commit for our epoch while ours is pending is the one that won: discard ours first.
  if (commitPending) throw new MlsBridgeError('commit_pending');
}

/**
 * What ts-mls `processMessage` does for an application message, keeping the sender it drops:
 * unprotect with the current epoch's keys or a retained past epoch's, then store the advanced
 * secret tree. The caller has checked the header.
 */
export async function openPrivateMessage(
  current: ClientState,
  pm: PrivateMessage,
  cs: CiphersuiteImpl,
): Promise<OpenedMessage> {
  const past = pm.epoch < current.groupContext.epoch ? current.historicalReceiverData.get(pm.epoch) : undefined;
  const keys: Omit<EpochReceiverData, 'resumptionPsk'> = past ?? {
    senderDataSecret: current.keySchedule.senderDataSecret,
    secretTree: current.secretTree,
    ratchetTree: current.ratchetTree,
    groupContext: current.groupContext,
  };
  let r: Awaited<ReturnType<typeof unprotectPrivateMessage>>;
  try {
    r = await unprotectPrivateMessage(
      keys.senderDataSecret,
      pm,
      keys.secretTree,
      keys.ratchetTree,
      keys.groupContext,
      current.clientConfig.keyRetentionConfig,
      cs,
    );
  } catch (e) {
    throw new MlsBridgeError('decrypt_failed', { cause: e });
  }
  const content = r.content.content;
  const sender =
    content.sender.senderType === 'member' ? identityAt(keys.ratchetTree, content.sender.leafIndex) : undefined;
  if (content.contentType !== 'application' || sender === undefined) throw new MlsBridgeError('decrypt_failed');
  const next: ClientState = past
    ? {
        ...current,
        historicalReceiverData: new Map(current.historicalReceiverData).set(pm.epoch, {
          ...past,
          secretTree: r.tree,
        }),
      }
    : { ...current, secretTree: r.tree };
  return {
    message: { plaintext: content.applicationData, sender, epoch: epochNumber(pm.epoch) },
    next,
    consumed: r.consumed,
  };
}

/** Who was added and removed by another member's commit, named from the tree before it. */
export function commitSummary(
  commit: IncomingCommit,
  before: ClientState,
  epoch: number,
  active: boolean,
): ProcessedMessage {
  const added: string[] = [];
  const removed: string[] = [];
  for (const { proposal } of commit.proposals) {
    if (proposal.proposalType === 'add') added.push(identityOf(proposal.add.keyPackage.leafNode.credential) ?? '');
    if (proposal.proposalType === 'remove') removed.push(identityAt(before.ratchetTree, proposal.remove.removed) ?? '');
  }
  return {
    kind: 'commit',
    sender: identityAt(before.ratchetTree, commit.senderLeafIndex),
    epoch,
    added,
    removed,
    removedSelf: !active,
  };
}

/**
 * The confirmed state, with the past-epoch receiver keys taken from the pre-commit state as it is
 * now. ts-mls snapshotted them when the commit was made; messages read since then advanced (and
 * zeroed) ratchets in that snapshot, which would otherwise break reading later ones of that epoch.
 */
export function withReceiverDataOf(next: ClientState, before: ClientState): ClientState {
  const previous = before.groupContext.epoch;
  const data = new Map<bigint, EpochReceiverData>();
  for (const [epoch, entry] of next.historicalReceiverData) {
    if (epoch === previous) data.set(epoch, { ...entry, secretTree: before.secretTree });
    else data.set(epoch, before.historicalReceiverData.get(epoch) ?? entry);
  }
  return { ...next, historicalReceiverData: data };
}
