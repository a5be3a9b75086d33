import type { MlsIdentity } from '@wmp/mls-bridge';
import type { ClientCallOptions } from '../client/types.js';
import type { ClientStore } from '../store/store.js';
import type { GroupError } from './errors.js';

/** Who the member is: `Identity` fits (its Ed25519 key is the MLS signature key, its did:key the credential). */
export interface GroupIdentity {
  readonly did: string;
  readonly keypair: MlsIdentity;
}

export interface GroupOptions {
  /** The client's identity (the same `did` as the `WmpClient`), with its private key. */
  readonly identity: GroupIdentity;
  /** Where the group state (`group/<session-id>/state`) and the unused key packages (`group/key-packages`) live. */
  readonly store: ClientStore;
  /** Times a commit is made again after another member's commit won its epoch; default 5. */
  readonly maxCommitRetries?: number;
  /** Times a message or a commit is sent again after the connection dropped under it; default 3. */
  readonly sendRetries?: number;
  /** Incoming group messages waiting to be processed at most; more stay at the relay and are fetched later. Default 1000. */
  readonly maxPendingMessages?: number;
}

export interface GroupCreateOptions extends GroupOptions, ClientCallOptions {
  /** Requested lifetime of the group session in seconds (default the client's `ttl`). */
  readonly ttl?: number;
}

export interface GroupJoinOptions extends GroupOptions, ClientCallOptions {}

/** What `publishKeyPackages` needs: the identity and the store its private keys go to. */
export interface KeyPackageOptions extends ClientCallOptions {
  readonly identity: GroupIdentity;
  readonly store: ClientStore;
}

/** A commit of ours (add, remove, update) the relay accepted. */
export interface GroupCommitResult {
  /** The epoch the group is in now. */
  readonly epoch: number;
  /** 1, or more when other members' commits won earlier attempts (each lost one was made again). */
  readonly attempts: number;
}

export interface GroupMessageOptions extends ClientCallOptions {
  /** Default `application/json`. */
  readonly contentType?: string;
  /** Some participants only; default every other member of the MLS group. */
  readonly to?: readonly string[];
  /** The application's own id of the message (`wmp.client_message_id`); default a fresh random one. */
  readonly clientMessageId?: string;
  /** `wmp.expires_at`: the relay drops the message after it. */
  readonly expiresAt?: Date | string;
  readonly messageType?: string;
  readonly inReplyTo?: string;
}

export interface GroupSendResult {
  /** The relay's id of the message. */
  readonly messageId: string | undefined;
  readonly clientMessageId: string;
  /** The epoch it was encrypted in. */
  readonly epoch: number;
  readonly status: string | undefined;
}

/** An incoming group message that was not handed to the application, or a failure in the background. */
export interface GroupErrorEvent {
  readonly error: GroupError;
  /** The method of the message concerned, if any (`wmp.message.deliver`, `wmp.mls.group.add`, ...). */
  readonly method?: string;
  readonly messageId?: string;
  /** Its sender as the relay authenticated it. */
  readonly sender?: string;
  /** The epoch in its clear header. */
  readonly epoch?: number;
}

/** What a `Group` tells its user (messages themselves arrive as the client's `message` events). */
export interface GroupEvents {
  /** A Welcome for this member was processed: it reads and sends from this epoch on. */
  joined: { readonly epoch: number; readonly members: readonly string[] };
  /** A commit moved the group to `epoch` (another member's, or one of ours the relay accepted). */
  commit: {
    readonly sender: string | undefined;
    readonly epoch: number;
    readonly added: readonly string[];
    readonly removed: readonly string[];
  };
  /** This member was removed (by `by`): it can no longer read or send. */
  removed: { readonly by: string | undefined; readonly epoch: number };
  error: GroupErrorEvent;
}
