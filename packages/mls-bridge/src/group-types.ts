// The shapes `MlsGroup` takes and returns, apart from the class so its operations read on their own.
import type { CommitKind } from './saved-state.js';
import type { ClientState } from './ts-mls.js';

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

/** Our commit waiting for the delivery service, with the state it leads to. */
export interface PendingCommitState {
  readonly kind: CommitKind;
  readonly state: ClientState;
  readonly commit: string;
  readonly welcome: string | undefined;
  readonly epoch: bigint;
  /** Keys the commit used up; zeroed once it is confirmed (empty after a restore). */
  readonly consumed: readonly Uint8Array[];
}

export interface MessageHeader {
  readonly groupId: Uint8Array;
  readonly epoch: bigint;
  readonly contentType: 'application' | 'proposal' | 'commit';
}
