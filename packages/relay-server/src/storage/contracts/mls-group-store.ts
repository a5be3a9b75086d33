import { StoreInputError } from '../errors.js';

/**
 * What the relay knows of the MLS group of one group session: never a key, only what it needs
 * to order commits (docs/architecture.md, "Group sessions": the first commit of an epoch wins).
 */
export interface MlsGroupRecord {
  /** The relay session the group runs in (one group per session). */
  readonly sessionId: string;
  /** The MLS group id, base64url without padding. */
  readonly groupId: string;
  readonly cipherSuite: number;
  /** The group's current epoch: a commit made in this epoch is the next one accepted. */
  readonly epoch: number;
  /** SHA-256 (base64url) of the commit that moved the group into `epoch`, if any: a retry of it is recognised. */
  readonly lastCommit: string | undefined;
  /** When the record goes (ms since the epoch): the session's expiry. */
  readonly expiresAt: number;
}

export type MlsGroupInput = Omit<MlsGroupRecord, 'lastCommit'>;

export type CreateGroupResult =
  | { readonly status: 'created'; readonly group: MlsGroupRecord }
  /** The session already has a group (possibly another one): nothing changed. */
  | { readonly status: 'exists'; readonly group: MlsGroupRecord }
  /** The store holds `maxGroups` groups. */
  | { readonly status: 'full' };

export type AdvanceResult =
  /** The commit was made in the current epoch: the group is now in `epoch` (one more). */
  | { readonly status: 'advanced'; readonly epoch: number }
  /** This very commit already moved the group into `epoch` (a retry after a lost answer). */
  | { readonly status: 'repeat'; readonly epoch: number }
  /** Another commit won that epoch, or the epoch is not the group's: `epoch` is the current one. */
  | { readonly status: 'conflict'; readonly epoch: number }
  | { readonly status: 'missing' };

/**
 * The relay's per-session MLS group state, async so a distributed adapter fits. `advance` is the
 * ordering point of commits and is atomic: of two commits made in the same epoch exactly one
 * advances, whatever the interleaving of callers.
 */
export interface MlsGroupStore {
  /** Records the group of a session unless it already has one. */
  create(group: MlsGroupInput): Promise<CreateGroupResult>;
  get(sessionId: string): Promise<MlsGroupRecord | undefined>;
  /**
   * Compare-and-advance: when the group is in `fromEpoch`, moves it to `fromEpoch + 1` and
   * remembers `commitHash` as the commit that did it. Durable once resolved.
   */
  advance(sessionId: string, fromEpoch: number, commitHash: string): Promise<AdvanceResult>;
  /**
   * Undoes an `advance` whose commit could not be queued for the members (compare-and-set: only
   * while the group is still in `fromEpoch + 1` by `commitHash`); true when it did. Without it no
   * member would ever hold the commit that moved the group, and every later commit would lose.
   */
  retract(sessionId: string, fromEpoch: number, commitHash: string): Promise<boolean>;
  /** Forgets the group of a session (the session ended). */
  delete(sessionId: string): Promise<void>;
  /** Removes at most `batch` (<= 1000) groups whose session expired; returns how many. */
  sweepExpired(now: number, batch: number): Promise<number>;
  /** Groups held, O(1). */
  size(): Promise<number>;
}

export const DEFAULT_MAX_GROUPS = 100_000;

export function checkGroupInput(group: MlsGroupInput): void {
  if (
    typeof group?.sessionId !== 'string' ||
    group.sessionId.length === 0 ||
    group.sessionId.length > 256 ||
    typeof group.groupId !== 'string' ||
    group.groupId.length === 0 ||
    group.groupId.length > 512 ||
    !Number.isSafeInteger(group.cipherSuite) ||
    !Number.isSafeInteger(group.epoch) ||
    group.epoch < 0 ||
    !Number.isFinite(group.expiresAt)
  ) {
    throw new StoreInputError('not an MLS group record');
  }
}

export function checkEpoch(epoch: number): void {
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new StoreInputError('epoch must be a non-negative integer');
}
