import { MlsError } from '@wmp/jsonrpc-envelope';

/**
 * Why an MLS operation was refused: the stable `data.reason` of the -31004 error. Callers switch on
 * these, so they never change meaning; new ones may be added.
 */
export type MlsFailureReason =
  /** Not base64url, not an MLSMessage, trailing bytes, or the wrong kind of message for the call. */
  | 'malformed'
  /** Framed correctly but does not decrypt or authenticate (tampered, replayed, or not for us). */
  | 'decrypt_failed'
  /** A message from an epoch this member has not reached (it missed a commit, or was removed). */
  | 'unknown_epoch'
  /** A message from an epoch whose keys were already dropped (older than the retention window). */
  | 'epoch_too_old'
  /** `wmp.epoch` in the clear does not match the epoch inside the MLS message. */
  | 'epoch_mismatch'
  /** A message for another group. */
  | 'wrong_group'
  /** `wmp.sender` names someone else than the member who signed the MLS message. */
  | 'sender_mismatch'
  /** A Welcome that carries no secrets for any key package this client holds. */
  | 'welcome_not_for_us'
  /** A Welcome for us that does not validate (bad signature, a member whose credential is refused). */
  | 'invalid_welcome'
  /** A credential that is not `basic` + a DID whose key is the leaf's signature key. */
  | 'credential_mismatch'
  /** A key package with a bad signature, another cipher suite, or outside its lifetime. */
  | 'invalid_key_package'
  /** A remove (or lookup) of an identity that is not in the group. */
  | 'not_a_member'
  /** A commit removing its own committer: propose it with `proposeRemove` and let another member commit. */
  | 'self_remove'
  /** An add of an identity that is already in the group. */
  | 'already_member'
  /** This member was removed from the group: it can neither send nor read. */
  | 'removed'
  /** A commit of ours waits for `confirmCommit()` / `discardPendingCommit()`. */
  | 'commit_pending'
  /** `confirmCommit()` / `discardPendingCommit()` without a pending commit. */
  | 'no_pending_commit'
  /** Received proposals must be committed before sending application messages. */
  | 'proposals_pending'
  /** An incoming commit or proposal that does not validate. */
  | 'commit_invalid'
  /** A cipher suite other than 0x0001 and 0x0002. */
  | 'unsupported_cipher_suite'
  /** Saved state that does not decode, or that belongs to another identity. */
  | 'invalid_state'
  /** Params that cannot be encrypted or are not an encrypted WMP payload. */
  | 'invalid_params'
  /** The decrypted payload is not a UTF-8 JSON object. */
  | 'invalid_plaintext'
  /** An identity (keypair or DID) this package cannot bind to an MLS signature key. */
  | 'invalid_identity';

/**
 * Every refusal of this package: a WMP -31004 "MLS error" (`instanceof MlsError` from
 * @wmp/jsonrpc-envelope) whose `data` is `{ reason }`, ready to go back to the peer. The ts-mls
 * error behind it, if any, is `cause`: it stays local, because its text describes our internals.
 */
export class MlsBridgeError extends MlsError {
  readonly reason: MlsFailureReason;
  constructor(reason: MlsFailureReason, options?: { cause?: unknown }) {
    super({ reason });
    this.name = 'MlsBridgeError';
    this.reason = reason;
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** `e` if it is already ours, otherwise a new error with `reason` and `e` as its cause. */
export function asBridgeError(e: unknown, reason: MlsFailureReason): MlsBridgeError {
  return e instanceof MlsBridgeError ? e : new MlsBridgeError(reason, { cause: e });
}
