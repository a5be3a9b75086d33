import { ErrorCode, WmpError } from '@wmp/jsonrpc-envelope';
import { type CommitResult, inspectMessage, type MlsGroup, verifyKeyPackage } from '@wmp/mls-bridge';
import type { ClientCallOptions } from '../client/types.js';
import { callOptions, type GroupCore, isRetryable } from './core.js';
import { fromMls, GroupError, mlsReasonOf, relayEpochOf } from './errors.js';
import type { Inbound } from './inbound.js';
import { COMMIT_METHODS, isRecord, type Params, str } from './incoming.js';
import type { Submission } from './record.js';
import type { GroupCommitResult } from './types.js';

/** After a lost epoch: rounds of (wait, fetch) for the winning commit, the wait doubling from this. */
const REACH_ROUNDS = 6;
const REACH_FIRST_WAIT_MS = 50;

type Submitted =
  | { readonly accepted: true; readonly epoch: number }
  | { readonly accepted: false; readonly relayEpoch: number };

/**
 * Our commits and the relay: registering the group, taking key packages, and getting each commit
 * accepted (docs/architecture.md, "Group sessions": the first commit of an epoch wins). A commit is
 * stored as pending before it is sent and confirmed only on the relay's acceptance; a lost epoch
 * drops it, waits for the winner, and makes it again.
 */
export class Commits {
  readonly #core: GroupCore;
  readonly #inbound: Inbound;

  constructor(core: GroupCore, inbound: Inbound) {
    this.#core = core;
    this.#inbound = inbound;
  }

  /** `wmp.mls.group.create`: the relay learns the group (id, suite, GroupInfo) and orders its commits from now on. */
  async announce(options: ClientCallOptions): Promise<void> {
    const core = this.#core;
    const mls = core.member();
    await core.request(
      'wmp.mls.group.create',
      {
        wmp: { epoch: mls.epoch },
        group_id: mls.groupId,
        cipher_suite: mls.cipherSuite,
        accepted_credential_types: ['basic'],
        accepted_identity_schemes: ['did'],
        group_info: await mls.groupInfo(),
      },
      options,
    );
    core.announce = false;
    await core.save();
  }

  /**
   * One key package of `identity` from the relay (`ohan.mls.keypackage.fetch`), checked here: the
   * relay must not be able to slip in someone else, so its credential must name `identity`.
   */
  async takeKeyPackage(identity: string, options: ClientCallOptions): Promise<string> {
    const cipherSuite = this.#core.keyring.client.cipherSuite;
    let answer: unknown;
    try {
      answer = await this.#core.client.request(
        'ohan.mls.keypackage.fetch',
        { identity, cipher_suite: cipherSuite },
        callOptions(options),
      );
    } catch (e) {
      if (e instanceof WmpError && e.code === ErrorCode.ParticipantNotFound) {
        throw new GroupError('ERR_GROUP_NO_KEY_PACKAGE', { cause: e });
      }
      throw e;
    }
    const keyPackage = isRecord(answer) ? str(answer.key_package) : undefined;
    if (keyPackage === undefined) throw new GroupError('ERR_GROUP_BAD_KEY_PACKAGE', { reason: 'malformed' });
    const info = await verifyKeyPackage(keyPackage, { cipherSuite }).catch((e: unknown) => {
      throw new GroupError('ERR_GROUP_BAD_KEY_PACKAGE', { reason: mlsReasonOf(e), cause: e });
    });
    if (info.identity !== identity)
      throw new GroupError('ERR_GROUP_BAD_KEY_PACKAGE', { reason: 'credential_mismatch' });
    return keyPackage;
  }

  /**
   * Makes a commit and gets it accepted: on a lost epoch it waits until the winning commit is
   * processed and makes it again (unless what it was for is done by then), up to `maxCommitRetries`.
   */
  async run(
    submission: Submission,
    make: (mls: MlsGroup) => Promise<CommitResult>,
    reached: () => boolean,
    options: ClientCallOptions,
  ): Promise<GroupCommitResult> {
    const core = this.#core;
    for (let attempt = 1; ; attempt++) {
      const outcome = await core.tasks.run(async (): Promise<Submitted> => {
        const mls = core.member();
        const earlier = await this.settlePending(options);
        if (earlier && !earlier.accepted) return earlier;
        if (attempt > 1 && reached()) return { accepted: true, epoch: mls.epoch };
        core.submission = submission;
        let made: CommitResult;
        try {
          made = await make(mls);
        } catch (e) {
          core.submission = undefined;
          throw fromMls(e);
        }
        return this.#submit(made, submission, options);
      });
      if (outcome.accepted) return { epoch: outcome.epoch, attempts: attempt };
      if (attempt > core.maxCommitRetries) throw new GroupError('ERR_GROUP_COMMIT_CONFLICT');
      await this.#reach(outcome.relayEpoch, options);
    }
  }

  /** A commit of ours left pending (no answer came, or a restart): send it again and settle it. */
  async settlePending(options: ClientCallOptions): Promise<Submitted | undefined> {
    const pending = this.#core.mls?.pendingCommit;
    if (!pending) return undefined;
    const submission =
      this.#core.submission ?? (pending.kind === 'update' ? { method: 'wmp.mls.group.update' as const } : undefined);
    if (!submission) {
      await this.#resolve('discard'); // without its participant it cannot be sent again
      return undefined;
    }
    return this.#submit(pending, submission, options);
  }

  /**
   * Sends our pending commit and settles it by the relay's answer: accepted, confirm it; another
   * commit won the epoch, drop it; refused otherwise, drop it and throw. A dropped connection
   * leaves it pending (the relay may have it): the next commit or `restore` sends it again, and
   * the relay recognises a repeat.
   */
  async #submit(made: CommitResult, submission: Submission, options: ClientCallOptions): Promise<Submitted> {
    const core = this.#core;
    const params: Params = {
      wmp: { epoch: made.epoch },
      commit: made.commit,
      ...(submission.participant === undefined ? {} : { participant: submission.participant }),
      ...(submission.method === 'wmp.mls.group.add' && made.welcome !== undefined ? { welcome: made.welcome } : {}),
    };
    try {
      await core.request(submission.method, params, options);
    } catch (e) {
      if (mlsReasonOf(e) === 'epoch_conflict') return this.#onConflict(made, relayEpochOf(e) ?? made.nextEpoch);
      if (!isRetryable(e)) await this.#resolve('discard');
      throw e;
    }
    await this.#resolve('confirm');
    const epoch = core.mls!.epoch;
    const named = submission.participant === undefined ? [] : [submission.participant];
    core.events.emit('commit', {
      sender: core.did,
      epoch,
      added: submission.method === 'wmp.mls.group.add' ? named : [],
      removed: submission.method === 'wmp.mls.group.remove' ? named : [],
    });
    return { accepted: true, epoch };
  }

  /**
   * The relay refused our commit's epoch. Usually another member's commit won it: drop ours. But
   * when the relay is more than one epoch on (after a restart or a long drop), ours may have won
   * earlier and others built on it: it lost only if another member's commit made in our epoch
   * waits in our queue (the relay never sends us our own).
   */
  async #onConflict(made: CommitResult, relayEpoch: number): Promise<Submitted> {
    if (relayEpoch > made.nextEpoch && !(await this.#queueHasCommitAt(made.epoch))) {
      await this.#resolve('confirm');
      return { accepted: true, epoch: this.#core.mls!.epoch };
    }
    await this.#resolve('discard');
    return { accepted: false, relayEpoch };
  }

  /** Confirms or drops the pending commit, forgetting its submission in the same write. */
  async #resolve(how: 'confirm' | 'discard'): Promise<void> {
    const core = this.#core;
    const mls = core.mls!;
    const submission = core.submission;
    core.submission = undefined;
    try {
      await (how === 'confirm' ? mls.confirmCommit() : mls.discardPendingCommit());
    } catch (e) {
      core.submission = submission;
      throw fromMls(e);
    }
    core.changed();
    this.#inbound.settled();
  }

  /** After a lost epoch: until the group is in `relayEpoch`, wait for the winner to arrive, then fetch it. */
  async #reach(relayEpoch: number, options: ClientCallOptions): Promise<void> {
    const core = this.#core;
    const behind = () => core.active && (core.epoch ?? 0) < relayEpoch;
    for (let round = 0; round < REACH_ROUNDS; round++) {
      await core.tasks.idle();
      if (!behind()) return;
      await core.nextChange(REACH_FIRST_WAIT_MS * 2 ** round, options.signal);
      if (!behind()) return;
      await core.tasks.run(() => this.#inbound.catchUp(options));
    }
    if (behind()) throw new GroupError('ERR_GROUP_OUT_OF_SYNC');
  }

  async #queueHasCommitAt(epoch: number): Promise<boolean> {
    let found = false;
    await this.#core.fetchQueue(async (m) => {
      if (!COMMIT_METHODS.has(m.method as string) || typeof m.commit !== 'string') return undefined;
      try {
        found = inspectMessage(m.commit).epoch === epoch;
      } catch {
        return undefined;
      }
      return found;
    }, {});
    return found;
  }
}
