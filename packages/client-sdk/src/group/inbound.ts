import { MlsError } from '@wmp/jsonrpc-envelope';
import { inspectMessage, MlsGroup } from '@wmp/mls-bridge';
import { isEncrypted, openParams, type SessionCipher } from '@wmp/session';
import type { GroupSessionLayer } from '../client/group-session.js';
import type { ClientCallOptions } from '../client/types.js';
import { aboutOf, type GroupCore } from './core.js';
import { GroupError, mlsReasonOf } from './errors.js';
import { type Clear, clearOf, isRecord, type Params, str, TRANSIENT_REASONS } from './incoming.js';

/** Catch-ups in a row that may find nothing new before the group reports itself out of sync. */
const MAX_IDLE_CATCH_UPS = 3;

/** `done`: dealt with for good (remembered, acknowledged); `later`: must wait for a commit we lack. */
type Outcome = 'done' | 'later';
type Read = { readonly kind: 'read'; readonly params: Params } | { readonly kind: 'skipped'; readonly reason: string };
type Handler = (params: Params, clear: Clear, method: string) => Promise<Outcome>;

/**
 * What arrives on a group session, processed one at a time in the group's task queue: commits,
 * Welcomes and encrypted messages, live (through the session's cipher and the client's routing of
 * `wmp.mls.group.*`) or read from the relay queue (`wmp.message.fetch`). Everything is recognised
 * by its ids when it comes again. What can never be read is an `error` event and acknowledged;
 * what waits for a missing commit is left at the relay and read again by a catch-up.
 */
export class Inbound {
  readonly #core: GroupCore;
  readonly #handlers: Readonly<Record<string, Handler>>;
  /** What `GroupSession.attach` takes. */
  readonly layer: GroupSessionLayer;
  #catchUpQueued = false;
  #catchingUp = false;
  /** Something could not be processed yet since the current catch-up began (it waits for a commit). */
  #stuck = false;
  #idleCatchUps = 0;

  constructor(core: GroupCore) {
    this.#core = core;
    const cipher: SessionCipher = {
      identity: core.did,
      get epoch() {
        return core.epoch ?? 0;
      },
      encryptParams: (params) => core.tasks.run(() => core.member().encryptParams(params)),
      decryptParams: (params) => this.#liveDeliver(params),
    };
    this.layer = { cipher, control: (method, params) => this.#liveControl(method, params) };
    this.#handlers = {
      'wmp.mls.group.create': (p, c) => this.#onCreate(p, c),
      'wmp.mls.group.add': (p, c) => this.#onAdd(p, c),
      'wmp.mls.group.remove': (p, c, m) => this.#onCommit(p, c, m),
      'wmp.mls.group.update': (p, c, m) => this.#onCommit(p, c, m),
      // Another member processed its Welcome: nothing to do here.
      'wmp.mls.group.join': async () => 'done',
    };
  }

  /** Reads the session's relay queue and processes it in order (run it in the task queue). */
  async catchUp(options: ClientCallOptions): Promise<void> {
    const core = this.#core;
    this.#catchUpQueued = false;
    if (core.closed) return;
    const before = { epoch: core.epoch, joined: core.mls !== undefined };
    let read = 0;
    this.#stuck = false;
    this.#catchingUp = true;
    try {
      await core.fetchQueue(async (m) => {
        if (core.closed) return true;
        const { method = 'wmp.message.deliver', ...params } = m;
        if (method === 'wmp.message.deliver') {
          // Clear content reaches the application the usual way; encrypted content is read here.
          if (isEncrypted(params)) read += await this.#readFetched(params);
          return undefined;
        }
        if (typeof method === 'string' && this.#handlers[method]) await this.#readControl(method, params);
        return undefined;
      }, options);
    } finally {
      this.#catchingUp = false;
    }
    if (!this.#stuck) {
      this.#idleCatchUps = 0;
      return;
    }
    const progressed = read > 0 || core.epoch !== before.epoch || (core.mls !== undefined) !== before.joined;
    this.#idleCatchUps = progressed ? 0 : this.#idleCatchUps + 1;
    if (this.#idleCatchUps >= MAX_IDLE_CATCH_UPS) core.report(new GroupError('ERR_GROUP_OUT_OF_SYNC'));
    // What it waited for may have been processed (or may have arrived) since: try once more.
    else this.#catchUpLater();
  }

  /** Our pending commit was settled: what arrived meanwhile and had to wait is read now. */
  settled(): void {
    if (!this.#stuck) return;
    this.#idleCatchUps = 0;
    this.#catchUpLater();
  }

  /** Any other message that read fine: catch-ups may try again after a stall. */
  #progressed(): void {
    this.#idleCatchUps = 0;
  }

  // ---- live ----

  #liveControl(method: string, params: Params): void {
    if (this.#core.closed) return;
    const task = this.#core.tasks.offer(() => this.#readControl(method, params));
    // Full: it stays unacknowledged at the relay and is fetched once there is room.
    if (!task) this.#catchUpLater();
  }

  /** The session's cipher: decrypts in arrival order with everything else; refusals are -31004. */
  async #liveDeliver(params: Params): Promise<Params> {
    if (this.#core.closed) throw new MlsError({ reason: 'no_group' });
    const task = this.#core.tasks.offer(() => this.#readDeliver(params));
    if (!task) {
      this.#catchUpLater();
      throw new MlsError({ reason: 'busy' });
    }
    const read = await task;
    if (read.kind === 'skipped') throw new MlsError({ reason: read.reason });
    this.#progressed();
    return read.params;
  }

  /** An encrypted deliver from the relay queue: read, then handed to the client's listeners. */
  async #readFetched(params: Params): Promise<number> {
    const read = await this.#readDeliver(params);
    if (read.kind !== 'read') return 0;
    if (!this.#core.session.receive(read.params)) {
      const about = { method: 'wmp.message.deliver', ...aboutOf(clearOf(params)) };
      this.#core.report(new GroupError('ERR_GROUP_UNREADABLE', { reason: 'not_delivered' }), about);
    }
    return 1;
  }

  // ---- one message ----

  /** One encrypted deliver: decrypted (and remembered with the state), or reported and acknowledged. */
  async #readDeliver(params: Params): Promise<Read> {
    const core = this.#core;
    const clear = clearOf(params);
    const about = { method: 'wmp.message.deliver', ...aboutOf(clear) };
    try {
      if (core.seen.hasAny(clear.ids)) {
        core.ack(clear.messageId);
        return { kind: 'skipped', reason: 'duplicate' };
      }
      const mls = core.mls;
      if (!mls?.active) {
        const error = mls
          ? new GroupError('ERR_GROUP_REMOVED', { reason: 'removed' })
          : new GroupError('ERR_GROUP_NOT_JOINED', { reason: 'not_a_member' });
        await core.finish(clear);
        core.report(error, about);
        return { kind: 'skipped', reason: error.reason! };
      }
      core.inflight = clear.ids;
      try {
        const opened = await openParams(mls, 'wmp.message.deliver', params, clear.sender);
        core.seen.add(clear.ids);
        return { kind: 'read', params: opened };
      } catch (e) {
        const reason = mlsReasonOf(e) ?? 'decrypt_failed';
        // Not acknowledged: it reads once the group has the commit it is missing.
        if (TRANSIENT_REASONS.has(reason)) {
          this.#catchUpLater();
          return { kind: 'skipped', reason };
        }
        await core.finish(clear);
        const code = reason === 'removed' ? 'ERR_GROUP_REMOVED' : 'ERR_GROUP_UNREADABLE';
        core.report(new GroupError(code, { reason, cause: e }), about);
        return { kind: 'skipped', reason };
      } finally {
        core.inflight = [];
      }
    } catch (e) {
      core.reportUnexpected(e, about);
      return { kind: 'skipped', reason: 'failed' };
    }
  }

  /** One `wmp.mls.group.*` message: processed, then remembered and acknowledged (unless it must wait). */
  async #readControl(method: string, params: Params): Promise<void> {
    const core = this.#core;
    const clear = clearOf(params);
    try {
      if (core.seen.hasAny(clear.ids)) {
        core.ack(clear.messageId);
        return;
      }
      const handle = this.#handlers[method];
      if (!handle) return;
      core.inflight = clear.ids;
      let outcome: Outcome;
      try {
        outcome = await handle(params, clear, method);
      } finally {
        core.inflight = [];
      }
      if (outcome === 'later') {
        this.#catchUpLater();
        return;
      }
      this.#progressed();
      await core.finish(clear);
    } catch (e) {
      core.reportUnexpected(e, { method, ...aboutOf(clear) });
    }
  }

  async #onCreate(params: Params, clear: Clear): Promise<Outcome> {
    if (this.#core.mls?.active) return 'done';
    const welcome = isRecord(params.welcomes) ? str(params.welcomes[this.#core.did]) : undefined;
    if (welcome !== undefined) await this.#joinFrom(welcome, 'wmp.mls.group.create', clear);
    return 'done';
  }

  async #onAdd(params: Params, clear: Clear): Promise<Outcome> {
    if (this.#core.mls?.active) return this.#processCommit(params, 'wmp.mls.group.add', clear);
    // Not (or no longer) a member: only our own Welcome matters; commits before it cannot be read.
    const welcome = str(params.welcome);
    if (params.participant === this.#core.did && welcome !== undefined) {
      await this.#joinFrom(welcome, 'wmp.mls.group.add', clear);
    }
    return 'done';
  }

  async #onCommit(params: Params, clear: Clear, method: string): Promise<Outcome> {
    if (!this.#core.mls?.active) return 'done';
    return this.#processCommit(params, method, clear);
  }

  async #joinFrom(welcome: string, method: string, clear: Clear): Promise<void> {
    const core = this.#core;
    let mls: MlsGroup;
    try {
      mls = await MlsGroup.join(core.keyring.client, welcome, { persist: core.persist });
    } catch (e) {
      const reason = mlsReasonOf(e);
      if (reason === undefined) throw e;
      core.report(new GroupError('ERR_GROUP_WELCOME', { reason, cause: e }), { method, ...aboutOf(clear) });
      return;
    }
    core.mls = mls;
    core.changed();
    core.events.emit('joined', { epoch: mls.epoch, members: mls.members });
    // Tells the others (spec `wmp.mls.group.join`); informational, so a failure changes nothing.
    void core.session
      .request('wmp.mls.group.join', { group_id: mls.groupId, welcome_processed: true })
      .catch(() => undefined);
  }

  async #processCommit(params: Params, method: string, clear: Clear): Promise<Outcome> {
    const core = this.#core;
    const commit = str(params.commit);
    if (commit === undefined) {
      core.report(new GroupError('ERR_GROUP_UNREADABLE', { reason: 'malformed' }), { method, ...aboutOf(clear) });
      return 'done';
    }
    let r: Awaited<ReturnType<MlsGroup['process']>>;
    try {
      r = await core.mls!.process(commit);
    } catch (e) {
      const reason = mlsReasonOf(e);
      if (reason === undefined) throw e;
      // Processed before (a replay), or no longer ours to read.
      if (reason === 'epoch_too_old' || reason === 'removed') return 'done';
      if (TRANSIENT_REASONS.has(reason)) return 'later';
      core.report(new GroupError('ERR_GROUP_UNREADABLE', { reason, cause: e }), { method, ...aboutOf(clear) });
      return 'done';
    }
    if (r.kind !== 'commit') return 'done';
    // A removed member's state stays in the epoch it was removed from: name the one the group moved to.
    const epoch = r.removedSelf ? inspectMessage(commit).epoch! + 1 : r.epoch;
    core.changed();
    core.events.emit('commit', { sender: r.sender, epoch, added: r.added, removed: r.removed });
    if (r.removedSelf) core.events.emit('removed', { by: r.sender, epoch });
    return 'done';
  }

  /**
   * Something must wait for a commit the group does not have yet: queue one catch-up (at most one
   * waits), unless catch-ups in a row have stopped making progress.
   */
  #catchUpLater(): void {
    this.#stuck = true;
    const core = this.#core;
    if (this.#catchUpQueued || this.#catchingUp || core.closed || this.#idleCatchUps >= MAX_IDLE_CATCH_UPS) return;
    this.#catchUpQueued = true;
    void core.tasks.run(() => this.catchUp({})).catch((e: unknown) => core.reportUnexpected(e));
  }
}
