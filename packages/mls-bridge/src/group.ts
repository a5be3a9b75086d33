import { b64urlEncode, randomBytes, timingSafeEqual } from '@wmp/jcs-signing';
import { type CipherSuiteId, cipherSuiteIdOf } from './cipher-suites.js';
import { type ClientInternals, clientInternals, type MlsClient } from './client.js';
import { encryptedParams, encryptedPartsOf, type Params, paramsFromPlaintext, plaintextOf } from './content.js';
import { asBridgeError, MlsBridgeError } from './errors.js';
import { credentialMatchesKey, identityOf } from './identity.js';
import { generateOwnKeyPackage, KEY_PACKAGE_LIFETIME_SECONDS, readKeyPackage } from './key-package.js';
import { type CommitKind, type DecodedState, decodeSavedGroup, encodeSavedGroup } from './saved-state.js';
import { identityAt, leafAt, leafIndexOf, membersOf } from './tree.js';
import {
  type CiphersuiteImpl,
  type ClientState,
  type CreateCommitOptions,
  createApplicationMessage,
  createCommit,
  createGroup,
  createGroupInfoWithExternalPubAndRatchetTree,
  createProposal,
  type EpochReceiverData,
  emptyPskIndex,
  type IncomingMessageCallback,
  joinGroup,
  type PrivateMessage,
  type Proposal,
  type ProposalWithSender,
  processMessage,
  unprotectPrivateMessage,
  zeroOutUint8Array,
} from './ts-mls.js';
import { decodeMessage, encodeMessage, epochNumber, type MlsMessageOf } from './wire.js';

export interface MlsGroupOptions {
  /**
   * Called with the `save()` bytes after every change of state (message sent or read, commit made,
   * confirmed or discarded), before the keys the change used up are zeroed. If it throws, the
   * operation fails and the group stays as it was, so a crash never loses keys that are still needed.
   * Without it, call `save()` yourself after each operation.
   */
  readonly persist?: (saved: Uint8Array) => void | Promise<void>;
}

export interface CreateGroupOptions extends MlsGroupOptions {
  /** 1 to 255 bytes; 16 random bytes by default. */
  readonly groupId?: Uint8Array;
}

/** A commit of ours to send; the group waits for `confirmCommit()` or `discardPendingCommit()`. */
export interface CommitResult {
  /** The commit MLSMessage, base64url: for every current member. */
  readonly commit: string;
  /** The Welcome MLSMessage, base64url, with the ratchet tree: for the added members. */
  readonly welcome?: string;
  /** The epoch the commit is made in (the delivery service orders commits on it: first one wins). */
  readonly epoch: number;
  /** The epoch the group reaches once the commit is confirmed. */
  readonly nextEpoch: number;
}

export interface PendingCommit extends CommitResult {
  readonly kind: CommitKind;
}

export interface EncryptedMessage {
  /** The MLSMessage (private message), base64url: `params.ciphertext`. */
  readonly ciphertext: string;
  /** The epoch it was encrypted in: `wmp.epoch`. */
  readonly epoch: number;
}

export interface DecryptedMessage {
  readonly plaintext: Uint8Array;
  /** The DID of the member who signed it (authenticated by MLS, unlike `wmp.sender`). */
  readonly sender: string;
  readonly epoch: number;
}

/** What `process()` did with an incoming message. */
export type ProcessedMessage =
  | ({ readonly kind: 'application' } & DecryptedMessage)
  | {
      readonly kind: 'commit';
      /** The committer, or undefined for a commit by a non-member. */
      readonly sender: string | undefined;
      /** The epoch the group is in now. */
      readonly epoch: number;
      readonly added: readonly string[];
      readonly removed: readonly string[];
      /** This member was removed by the commit: the group can no longer be used. */
      readonly removedSelf: boolean;
    }
  | { readonly kind: 'proposal'; readonly sender: string | undefined; readonly epoch: number };

export interface DecryptParamsOptions {
  /**
   * Refuse (`sender_mismatch`) a message whose `wmp.sender` is not the DID that signed it inside
   * MLS (default true). Turn off only where `wmp.sender` uses another identifier scheme.
   */
  readonly checkSender?: boolean;
}

interface Pending {
  readonly kind: CommitKind;
  readonly state: ClientState;
  readonly commit: string;
  readonly welcome: string | undefined;
  readonly epoch: bigint;
  /** Keys the commit used up; zeroed once it is confirmed (empty after a restore). */
  readonly consumed: readonly Uint8Array[];
}

interface MessageHeader {
  readonly groupId: Uint8Array;
  readonly epoch: bigint;
  readonly contentType: 'application' | 'proposal' | 'commit';
}

/**
 * An MLS group as one member sees it. Every operation runs one at a time (they are queued), adopts
 * the new ts-mls state only once it is persisted, then zeroes the keys it used up; an old state
 * object is never used again (notes §1.5). A commit of ours stays pending, with the pre-commit state
 * kept and saved, until the caller reports what the delivery service did with it.
 */
export class MlsGroup {
  private state: ClientState;
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly internals: ClientInternals;
  private readonly cs: CiphersuiteImpl;
  private readonly persistHook: ((saved: Uint8Array) => void | Promise<void>) | undefined;

  private constructor(
    private readonly client: MlsClient,
    state: ClientState,
    pending: Pending | undefined,
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
    const i = clientInternals(client);
    const groupId = options.groupId ?? randomBytes(16);
    if (!(groupId instanceof Uint8Array) || groupId.length === 0 || groupId.length > 255) {
      throw new MlsBridgeError('invalid_params');
    }
    // The creator's leaf comes from a key package nobody else sees as such; its lifetime still
    // travels in the tree until the creator's next commit, so it gets the usual one.
    const kp = await generateOwnKeyPackage(
      client.identity,
      i.publicKey,
      i.seed.slice(),
      client.cipherSuite,
      KEY_PACKAGE_LIFETIME_SECONDS,
    );
    const state = await createGroup(groupId.slice(), kp.publicPackage, kp.privatePackage, [], i.cs, i.config);
    zeroOutUint8Array(kp.privatePackage.initPrivateKey);
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
    const i = clientInternals(client);
    const w = decodeMessage(welcome, 'mls_welcome').welcome;
    if (cipherSuiteIdOf(w.cipherSuite) !== client.cipherSuite) throw new MlsBridgeError('welcome_not_for_us');
    const own = i.findKeyPackage(new Set(w.secrets.map((s) => b64urlEncode(s.newMember))));
    if (!own) throw new MlsBridgeError('welcome_not_for_us');
    let state: ClientState;
    try {
      state = await joinGroup(
        w,
        own.publicPackage,
        { ...own.privatePackage, signaturePrivateKey: i.seed.slice() },
        emptyPskIndex,
        i.cs,
        undefined,
        undefined,
        i.config,
      );
    } catch (e) {
      throw new MlsBridgeError('invalid_welcome', { cause: e });
    }
    const group = new MlsGroup(client, state, undefined, options);
    // Persist the group before the key package is forgotten: a crash in between only means the
    // Welcome can be joined again.
    await group.adopt(state, undefined, []);
    await i.consumeKeyPackage(own.published.ref);
    zeroOutUint8Array(own.privatePackage.initPrivateKey);
    return group;
  }

  /**
   * A group from `save()` bytes, for the same client identity (the saved state holds no signature
   * key; the client's is put back, with its credential check). A pending commit is restored too:
   * confirm or discard it as the delivery service decided. Throws `invalid_state`.
   */
  static async restore(saved: Uint8Array, client: MlsClient, options: MlsGroupOptions = {}): Promise<MlsGroup> {
    const i = clientInternals(client);
    const attach = (s: DecodedState): ClientState => {
      const state: ClientState = { ...s, signaturePrivateKey: i.seed.slice(), clientConfig: i.config };
      const own = leafAt(state.ratchetTree, state.privatePath.leafIndex);
      // A removed member's leaf is gone from the tree; its state can do nothing but say so.
      const removed = state.groupActiveState.kind === 'removedFromGroup';
      const ours =
        cipherSuiteIdOf(state.groupContext.cipherSuite) === client.cipherSuite &&
        (removed ||
          (own !== undefined &&
            identityOf(own.credential) === client.identity &&
            credentialMatchesKey(own.credential, i.publicKey, client.cipherSuite)));
      if (!ours) throw new MlsBridgeError('invalid_state');
      return state;
    };
    const { state, pending } = decodeSavedGroup(saved, attach);
    const restored = pending && { ...pending, epoch: state.groupContext.epoch, consumed: [] };
    return new MlsGroup(client, state, restored, options);
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
    return withWelcome(
      { kind: p.kind, commit: p.commit, epoch: epochNumber(p.epoch), nextEpoch: epochNumber(p.epoch + 1n) },
      p.welcome,
    );
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
      if (list.length === 0) throw new MlsBridgeError('invalid_params');
      const members = new Set(this.members);
      const proposals: Proposal[] = [];
      for (const text of list) {
        const { keyPackage, info } = await readKeyPackage(text, this.cipherSuite);
        if (members.has(info.identity)) throw new MlsBridgeError('already_member');
        members.add(info.identity);
        proposals.push({ proposalType: 'add', add: { keyPackage } });
      }
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
      this.checkHeader(header);
      let commit: { senderLeafIndex: number | undefined; proposals: ProposalWithSender[] } | undefined;
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
      const added: string[] = [];
      const removed: string[] = [];
      for (const { proposal } of commit.proposals) {
        if (proposal.proposalType === 'add') added.push(identityOf(proposal.add.keyPackage.leafNode.credential) ?? '');
        if (proposal.proposalType === 'remove')
          removed.push(identityAt(before.ratchetTree, proposal.remove.removed) ?? '');
      }
      return {
        kind: 'commit',
        sender: identityAt(before.ratchetTree, commit.senderLeafIndex),
        epoch,
        added,
        removed,
        removedSelf: !this.active,
      };
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

  /** Persist, then adopt, then zero (notes §1.5): a failed persist leaves everything as it was. */
  private async adopt(state: ClientState, pending: Pending | undefined, consumed: readonly Uint8Array[]) {
    if (this.persistHook) await this.persistHook(encodeSavedGroup(state, pending));
    this.state = state;
    this.pending = pending;
    for (const secret of consumed) zeroOutUint8Array(secret);
  }

  private async commit(kind: CommitKind, options: CreateCommitOptions): Promise<CommitResult> {
    const epoch = this.state.groupContext.epoch;
    let r: Awaited<ReturnType<typeof createCommit>>;
    try {
      // The ratchet tree goes into any Welcome, so joiners need nothing out of band. The commit
      // stays a private message: the relay orders it by its clear epoch without reading it.
      r = await createCommit({ state: this.state, cipherSuite: this.cs }, { ...options, ratchetTreeExtension: true });
    } catch (e) {
      throw asBridgeError(e, 'commit_invalid');
    }
    const commit = encodeMessage(r.commit);
    const welcome = r.welcome && encodeMessage({ version: 'mls10', wireformat: 'mls_welcome', welcome: r.welcome });
    // The current state stays current (and saved) beside the new one until the caller confirms.
    await this.adopt(this.state, { kind, state: r.newState, commit, welcome, epoch, consumed: r.consumed }, []);
    return withWelcome({ commit, epoch: epochNumber(epoch), nextEpoch: epochNumber(epoch + 1n) }, welcome);
  }

  private async openApplication(message: string, expectedEpoch: number | undefined): Promise<DecryptedMessage> {
    const m = decodeMessage(message, 'mls_private_message');
    return this.openPrivate(m.privateMessage, expectedEpoch);
  }

  /**
   * What ts-mls `processMessage` does for an application message, keeping the sender it drops:
   * unprotect with the current epoch's keys or a retained past epoch's, then store the advanced
   * secret tree.
   */
  private async openPrivate(pm: PrivateMessage, expectedEpoch: number | undefined): Promise<DecryptedMessage> {
    if (pm.contentType !== 'application') throw new MlsBridgeError('malformed');
    this.checkHeader(pm);
    if (expectedEpoch !== undefined && BigInt(expectedEpoch) !== pm.epoch) throw new MlsBridgeError('epoch_mismatch');
    const current = this.state;
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
        this.cs,
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
    await this.adopt(next, this.pending, r.consumed);
    return { plaintext: content.applicationData, sender, epoch: epochNumber(pm.epoch) };
  }

  /** Refuses, before any key is touched, what this member cannot or must not process now. */
  private checkHeader(h: MessageHeader): void {
    const ours = this.state.groupContext;
    if (h.groupId.length !== ours.groupId.length || !timingSafeEqual(h.groupId, ours.groupId)) {
      throw new MlsBridgeError('wrong_group');
    }
    this.assertActive();
    if (h.epoch > ours.epoch) {
      // Our own commit was accepted and others already moved on: confirm it first, then retry.
      throw new MlsBridgeError(this.pending && h.epoch === ours.epoch + 1n ? 'commit_pending' : 'unknown_epoch');
    }
    if (h.contentType === 'application') {
      if (h.epoch < ours.epoch && !this.state.historicalReceiverData.has(h.epoch)) {
        throw new MlsBridgeError('epoch_too_old');
      }
      return;
    }
    if (h.epoch < ours.epoch) throw new MlsBridgeError('epoch_too_old');
    // A commit for our epoch while ours is pending is the one that won: discard ours first.
    if (this.pending) throw new MlsBridgeError('commit_pending');
  }

  private assertActive(): void {
    if (this.state.groupActiveState.kind !== 'active') throw new MlsBridgeError('removed');
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

function headerOf(m: MlsMessageOf<'mls_private_message' | 'mls_public_message'>): MessageHeader {
  return m.wireformat === 'mls_private_message' ? m.privateMessage : m.publicMessage.content;
}

/**
 * The confirmed state, with the past-epoch receiver keys taken from the pre-commit state as it is
 * now. ts-mls snapshotted them when the commit was made; messages read since then advanced (and
 * zeroed) ratchets in that snapshot, which would otherwise break reading later ones of that epoch.
 */
function withReceiverDataOf(next: ClientState, before: ClientState): ClientState {
  const previous = before.groupContext.epoch;
  const data = new Map<bigint, EpochReceiverData>();
  for (const [epoch, entry] of next.historicalReceiverData) {
    if (epoch === previous) data.set(epoch, { ...entry, secretTree: before.secretTree });
    else data.set(epoch, before.historicalReceiverData.get(epoch) ?? entry);
  }
  return { ...next, historicalReceiverData: data };
}

function withWelcome<T extends object>(result: T, welcome: string | undefined): T & { welcome?: string } {
  return welcome === undefined ? result : { ...result, welcome };
}
