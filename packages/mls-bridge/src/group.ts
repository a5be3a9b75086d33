import { b64urlEncode } from '@wmp/jcs-signing';
import type { CipherSuiteId } from './cipher-suites.js';
import { type ClientInternals, clientInternals, type MlsClient } from './client.js';
import { encryptedParams, encryptedPartsOf, type Params, paramsFromPlaintext, plaintextOf } from './content.js';
import { asBridgeError, MlsBridgeError } from './errors.js';
import {
  assertActive,
  checkHeader,
  commitSummary,
  headerOf,
  type IncomingCommit,
  openPrivateMessage,
  withReceiverDataOf,
} from './group-incoming.js';
import { addProposals, commitResultOf, pendingCommitOf, pendingCommitViewOf } from './group-outgoing.js';
import { createdGroupState, joinedGroupState, restoredGroupState } from './group-setup.js';
import type {
  CommitResult,
  CreateGroupOptions,
  DecryptedMessage,
  DecryptParamsOptions,
  EncryptedMessage,
  MlsGroupOptions,
  PendingCommit,
  PendingCommitState,
  ProcessedMessage,
} from './group-types.js';
import { type CommitKind, encodeSavedGroup } from './saved-state.js';
import { identityAt, leafIndexOf, membersOf } from './tree.js';
import {
  type CiphersuiteImpl,
  type ClientState,
  type CreateCommitOptions,
  createApplicationMessage,
  createGroupInfoWithExternalPubAndRatchetTree,
  createProposal,
  emptyPskIndex,
  type IncomingMessageCallback,
  type PrivateMessage,
  type Proposal,
  processMessage,
  zeroOutUint8Array,
} from './ts-mls.js';
import { decodeMessage, encodeMessage, epochNumber } from './wire.js';

/**
 * An MLS group as one member sees it. Every operation runs one at a time (they are queued), adopts
 * the new ts-mls state only once it is persisted, then zeroes the keys it used up; an old state
 * object is never used again (README, "Persistence rules"). A commit of ours stays pending, with
 * the pre-commit state kept and saved, until the caller reports what the delivery service did with
 * it.
 */
export class MlsGroup {
  private state: ClientState;
  private pending: PendingCommitState | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly internals: ClientInternals;
  private readonly cs: CiphersuiteImpl;
  private readonly persistHook: ((saved: Uint8Array) => void | Promise<void>) | undefined;

  private constructor(
    private readonly client: MlsClient,
    state: ClientState,
    pending: PendingCommitState | undefined,
    options: MlsGroupOptions,
  ) {
    this.internals = clientInternals(client);
    this.cs = this.internals.cs;
    this.state = state;
    this.pending = pending;
    this.persistHook = options.persist;
  }

  /** A new group with this client as its only member, at epoch 0. */
  static async create(client: MlsClient, options: CreateGroupOptions = {}): Promise<MlsGroup> {
    const state = await createdGroupState(client, options.groupId);
    const group = new MlsGroup(client, state, undefined, options);
    await group.adopt(state, undefined, []);
    return group;
  }

  /**
   * Joins from a Welcome (base64url) made for one of this client's key packages, which is then
   * forgotten (single use). Throws `malformed`, `welcome_not_for_us` (no secrets for any key package
   * we hold, or another suite) or `invalid_welcome` (it does not validate, e.g. a member's credential
   * is refused by the default-deny check).
   */
  static async join(client: MlsClient, welcome: string, options: MlsGroupOptions = {}): Promise<MlsGroup> {
    const { state, forgetKeyPackage } = await joinedGroupState(client, welcome);
    const group = new MlsGroup(client, state, undefined, options);
    // Persist the group before the key package is forgotten: a crash in between only means the
    // Welcome can be joined again.
    await group.adopt(state, undefined, []);
    await forgetKeyPackage();
    return group;
  }

  /**
   * A group from `save()` bytes, for the same client identity (the saved state holds no signature
   * key; the client's is put back, with its credential check). A pending commit is restored too:
   * confirm or discard it as the delivery service decided. Throws `invalid_state`.
   */
  static async restore(saved: Uint8Array, client: MlsClient, options: MlsGroupOptions = {}): Promise<MlsGroup> {
    const { state, pending } = restoredGroupState(saved, client);
    return new MlsGroup(client, state, pending, options);
  }

  /** The group id, base64url (as in `wmp.mls.group.create`). */
  get groupId(): string {
    return b64urlEncode(this.state.groupContext.groupId);
  }

  /** The current epoch; while a commit of ours is pending, the epoch before it. */
  get epoch(): number {
    return epochNumber(this.state.groupContext.epoch);
  }

  get cipherSuite(): CipherSuiteId {
    return this.client.cipherSuite;
  }

  /** This member's DID. */
  get identity(): string {
    return this.client.identity;
  }

  /** The members' DIDs, in leaf order (this member included). */
  get members(): string[] {
    return membersOf(this.state.ratchetTree);
  }

  /** False once this member was removed: it can then neither send nor read. */
  get active(): boolean {
    return this.state.groupActiveState.kind === 'active';
  }

  /** Our commit waiting for the delivery service, if any. */
  get pendingCommit(): PendingCommit | undefined {
    const p = this.pending;
    if (!p) return undefined;
    return pendingCommitViewOf(p);
  }

  /**
   * Adds members from their published key packages (checked first: signatures, lifetime, and the
   * credential's DID naming the leaf key). One commit, one Welcome carrying the ratchet tree.
   * Throws `malformed`, `invalid_key_package`, `credential_mismatch`, `already_member`,
   * `commit_pending`, `removed`.
   */
  add(keyPackages: string | readonly string[]): Promise<CommitResult> {
    return this.exclusive(async () => {
      this.assertCanCommit();
      const list = typeof keyPackages === 'string' ? [keyPackages] : [...keyPackages];
      const proposals = await addProposals(list, this.members, this.cipherSuite);
      return this.commit('add', { extraProposals: proposals });
    });
  }

  /**
   * Removes members by DID with real Remove proposals (by leaf index) in one commit: once it is
   * confirmed, the removed members cannot read anything sent after it. Throws `not_a_member`,
   * `self_remove`, `commit_pending`, `removed`.
   */
  remove(identities: string | readonly string[]): Promise<CommitResult> {
    return this.exclusive(async () => {
      this.assertCanCommit();
      const list = typeof identities === 'string' ? [identities] : [...new Set(identities)];
      if (list.length === 0) throw new MlsBridgeError('invalid_params');
      const proposals: Proposal[] = list.map((id) => {
        if (id === this.identity) throw new MlsBridgeError('self_remove');
        return { proposalType: 'remove', remove: { removed: this.leafIndexOf(id) } };
      });
      return this.commit('remove', { extraProposals: proposals });
    });
  }

  /** A commit with a fresh path (new keys for this member), also committing received proposals. */
  update(): Promise<CommitResult> {
    return this.exclusive(async () => {
      this.assertCanCommit();
      return this.commit('update', {});
    });
  }

  /**
   * A Remove proposal (base64url) for another member to commit; proposing one's own removal is how a
   * member leaves. Throws `not_a_member`, `commit_pending`, `removed`.
   */
  proposeRemove(identity: string): Promise<string> {
    return this.exclusive(async () => {
      this.assertCanCommit();
      const proposal: Proposal = { proposalType: 'remove', remove: { removed: this.leafIndexOf(identity) } };
      const r = await createProposal(this.state, false, proposal, this.cs);
      await this.adopt(r.newState, undefined, r.consumed);
      return encodeMessage(r.message);
    });
  }

  /**
   * The delivery service accepted our pending commit: move to its epoch, then zero the keys it used
   * up. Throws `no_pending_commit`.
   */
  confirmCommit(): Promise<void> {
    return this.exclusive(async () => {
      const p = this.pending;
      if (!p) throw new MlsBridgeError('no_pending_commit');
      await this.adopt(withReceiverDataOf(p.state, this.state), undefined, p.consumed);
    });
  }

  /**
   * The delivery service refused our pending commit (another commit won the epoch): drop it and
   * stay in the pre-commit state. Then process the winning commit and commit again if still needed.
   * Throws `no_pending_commit`.
   */
  discardPendingCommit(): Promise<void> {
    return this.exclusive(async () => {
      const p = this.pending;
      if (!p) throw new MlsBridgeError('no_pending_commit');
      await this.adopt(this.state, undefined, []);
      // Only the new epoch's own secrets: everything else may be shared with the state we keep.
      for (const secret of Object.values(p.state.keySchedule)) zeroOutUint8Array(secret);
    });
  }

  /** Encrypts application data in the current epoch. Throws `removed`, `proposals_pending`. */
  encrypt(plaintext: Uint8Array): Promise<EncryptedMessage> {
    return this.exclusive(async () => {
      if (!(plaintext instanceof Uint8Array)) throw new TypeError('plaintext must be a Uint8Array');
      this.assertActive();
      if (Object.keys(this.state.unappliedProposals).length > 0) throw new MlsBridgeError('proposals_pending');
      let out: Awaited<ReturnType<typeof createApplicationMessage>>;
      try {
        out = await createApplicationMessage(this.state, plaintext, this.cs);
      } catch (e) {
        throw asBridgeError(e, 'invalid_state');
      }
      const ciphertext = encodeMessage({
        version: 'mls10',
        wireformat: 'mls_private_message',
        privateMessage: out.privateMessage,
      });
      await this.adopt(out.newState, this.pending, out.consumed);
      return { ciphertext, epoch: epochNumber(out.privateMessage.epoch) };
    });
  }

  /**
   * Decrypts an application message (base64url) and names its authenticated sender. Throws
   * `malformed`, `wrong_group`, `unknown_epoch`, `epoch_too_old`, `commit_pending`, `decrypt_failed`,
   * `removed`; the group is unchanged by a refused message.
   */
  decrypt(message: string): Promise<DecryptedMessage> {
    return this.exclusive(() => this.openApplication(message, undefined));
  }

  /**
   * Processes any incoming MLS message: an application message (as `decrypt`), a proposal (kept
   * until a commit), or another member's commit (moves to the next epoch). Throws as `decrypt`, and
   * `commit_invalid` for a commit or proposal that does not validate.
   */
  process(message: string): Promise<ProcessedMessage> {
    return this.exclusive(async () => {
      const m = decodeMessage(message, 'mls_private_message', 'mls_public_message');
      const header = headerOf(m);
      if (header.contentType === 'application') {
        if (m.wireformat !== 'mls_private_message') throw new MlsBridgeError('malformed');
        return { kind: 'application' as const, ...(await this.openPrivate(m.privateMessage, undefined)) };
      }
      checkHeader(this.state, this.pending !== undefined, header);
      let commit: IncomingCommit | undefined;
      let proposalSender: number | undefined;
      const callback: IncomingMessageCallback = (incoming) => {
        if (incoming.kind === 'commit') commit = incoming;
        else proposalSender = incoming.proposal.senderLeafIndex;
        return 'accept';
      };
      const before = this.state;
      let r: Awaited<ReturnType<typeof processMessage>>;
      try {
        r = await processMessage(m, before, emptyPskIndex, callback, this.cs);
      } catch (e) {
        throw new MlsBridgeError('commit_invalid', { cause: e });
      }
      await this.adopt(r.newState, undefined, r.consumed);
      const epoch = this.epoch;
      if (!commit) return { kind: 'proposal', sender: identityAt(before.ratchetTree, proposalSender), epoch };
      return commitSummary(commit, before, epoch, this.active);
    });
  }

  /**
   * WMP content encryption (core §5.2): `params` minus `wmp` as UTF-8 JSON, encrypted into
   * `ciphertext`; `wmp` stays in the clear with `encrypted: true` and `epoch`. Throws
   * `invalid_params` (not an object, already encrypted, not representable as JSON) and as `encrypt`.
   */
  async encryptParams(params: Params): Promise<Params> {
    const { wmp, plaintext } = plaintextOf(params);
    const { ciphertext, epoch } = await this.encrypt(plaintext);
    return encryptedParams(wmp, ciphertext, epoch);
  }

  /**
   * Reverses `encryptParams`: the decrypted content merged with the clear `wmp`. Checks that
   * `wmp.epoch` is the message's epoch (`epoch_mismatch`) and, by default, that `wmp.sender` is the
   * member who signed it (`sender_mismatch`). Throws `invalid_params`, `invalid_plaintext` and as
   * `decrypt`.
   */
  async decryptParams(params: Params, options: DecryptParamsOptions = {}): Promise<Params> {
    const { wmp, ciphertext, epoch } = encryptedPartsOf(params);
    const d = await this.exclusive(() => this.openApplication(ciphertext, epoch));
    if ((options.checkSender ?? true) && typeof wmp.sender === 'string' && wmp.sender !== d.sender) {
      throw new MlsBridgeError('sender_mismatch');
    }
    return paramsFromPlaintext(wmp, d.plaintext);
  }

  /**
   * A signed GroupInfo (base64url) with the ratchet tree and external public key, as
   * `security.mls_group_info` / `wmp.mls.group.create` carry it.
   */
  groupInfo(): Promise<string> {
    return this.exclusive(async () => {
      this.assertActive();
      const gi = await createGroupInfoWithExternalPubAndRatchetTree(this.state, [], this.cs);
      return encodeMessage({ version: 'mls10', wireformat: 'mls_group_info', groupInfo: gi });
    });
  }

  /**
   * The group state as bytes for `MlsGroup.restore`: the current state and any pending commit with
   * the state it leads to. It holds the group's secrets (not the identity key): store it as a secret
   * and overwrite the old copy, since stale copies weaken forward secrecy.
   */
  save(): Uint8Array {
    return encodeSavedGroup(this.state, this.pending);
  }

  // --- internals -------------------------------------------------------------------------------

  /** Runs operations one at a time: two at once would start from the same state and reuse keys. */
  private exclusive<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op, op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Persist, then adopt, then zero (README, "Persistence rules"): a failed persist leaves everything as it was. */
  private async adopt(state: ClientState, pending: PendingCommitState | undefined, consumed: readonly Uint8Array[]) {
    if (this.persistHook) await this.persistHook(encodeSavedGroup(state, pending));
    this.state = state;
    this.pending = pending;
    for (const secret of consumed) zeroOutUint8Array(secret);
  }

  private async commit(kind: CommitKind, options: CreateCommitOptions): Promise<CommitResult> {
    const pending = await pendingCommitOf(this.state, this.cs, kind, options);
    // The current state stays current (and saved) beside the new one until the caller confirms.
    await this.adopt(this.state, pending, []);
    return commitResultOf(pending);
  }

  private async openApplication(message: string, expectedEpoch: number | undefined): Promise<DecryptedMessage> {
    const m = decodeMessage(message, 'mls_private_message');
    return this.openPrivate(m.privateMessage, expectedEpoch);
  }

  /** Opens an application message with the current or a retained past epoch's keys. */
  private async openPrivate(pm: PrivateMessage, expectedEpoch: number | undefined): Promise<DecryptedMessage> {
    if (pm.contentType !== 'application') throw new MlsBridgeError('malformed');
    checkHeader(this.state, this.pending !== undefined, pm);
    if (expectedEpoch !== undefined && BigInt(expectedEpoch) !== pm.epoch) throw new MlsBridgeError('epoch_mismatch');
    const { message, next, consumed } = await openPrivateMessage(this.state, pm, this.cs);
    await this.adopt(next, this.pending, consumed);
    return message;
  }

  private assertActive(): void {
    assertActive(this.state);
  }

  private assertCanCommit(): void {
    this.assertActive();
    if (this.pending) throw new MlsBridgeError('commit_pending');
  }

  private leafIndexOf(identity: string): number {
    const index = leafIndexOf(this.state.ratchetTree, identity);
    if (index === undefined) throw new MlsBridgeError('not_a_member');
    return index;
  }
}
