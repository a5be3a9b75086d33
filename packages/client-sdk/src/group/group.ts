import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import { MAX_KEY_PACKAGES_PER_PUBLISH, rfc3339 } from '@wmp/jsonrpc-envelope';
import { MlsGroup } from '@wmp/mls-bridge';
import type { WmpClient } from '../client/client.js';
import type { Listener } from '../client/emitter.js';
import type { GroupSession } from '../client/group-session.js';
import type { ClientCallOptions } from '../client/types.js';
import type { ClientStore } from '../store/store.js';
import { Commits } from './commits.js';
import { callOptions, GroupCore, type Initial } from './core.js';
import { fromMls, GroupError } from './errors.js';
import { Inbound } from './inbound.js';
import { isRecord, type Params, str } from './incoming.js';
import { Keyring } from './keyring.js';
import { decodeRecord, GROUP_STORE_PREFIX, groupStateKey, sessionIdOfKey } from './record.js';
import type {
  GroupCommitResult,
  GroupCreateOptions,
  GroupEvents,
  GroupIdentity,
  GroupJoinOptions,
  GroupMessageOptions,
  GroupOptions,
  GroupSendResult,
  KeyPackageOptions,
} from './types.js';

const DEFAULT_JOIN_TIMEOUT_MS = 30_000;
const NEW: Initial = Object.freeze({ announce: false, mls: undefined, submission: undefined, seen: [] });

/** The group attached to each group session in this process: a second `join`/`restore` returns it. */
const attached = new WeakMap<GroupSession, Group>();

function keyringFor(client: WmpClient, options: { identity: GroupIdentity; store: ClientStore }): Promise<Keyring> {
  if (options.identity?.did !== client.did || options.identity.keypair?.did !== client.did) {
    return Promise.reject(new GroupError('ERR_GROUP_IDENTITY'));
  }
  return Keyring.of(options.store, options.identity.keypair);
}

/**
 * An MLS group (RFC 9420, through @wmp/mls-bridge) run inside a relay-hosted group session of a
 * `WmpClient`: create it, add and remove members by identity with the key packages they published,
 * send end-to-end encrypted messages, and read what the others send (decrypted before the
 * client's `message` listeners see it). Its state is written to the store before anything leaves,
 * so a new client and `Group.restore` continue after a restart. Commits are confirmed only once
 * the relay accepted them; a commit that lost its epoch to another member's is dropped, the
 * winner processed, and the operation made again.
 */
export class Group {
  /** The relay's group session id (`ses-...`): what the others join. */
  readonly id: string;
  readonly #core: GroupCore;
  readonly #inbound: Inbound;
  readonly #commits: Commits;

  private constructor(core: GroupCore) {
    this.id = core.id;
    this.#core = core;
    this.#inbound = new Inbound(core);
    this.#commits = new Commits(core, this.#inbound);
  }

  // ---- making, joining, restoring ----

  /**
   * Creates a group session at the relay with `participants` (and us; nobody else can ever join
   * it, so list late joiners now), an MLS group in it with us alone at epoch 0, and registers the
   * group at the relay (`wmp.mls.group.create`). Add members with `add`.
   */
  static async create(client: WmpClient, participants: readonly string[], options: GroupCreateOptions): Promise<Group> {
    const keyring = await keyringFor(client, options);
    const session = await client.createGroup(participants, {
      ...callOptions(options),
      ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
    });
    const core = new GroupCore(client, session, keyring, options, { ...NEW, announce: true });
    const group = new Group(core);
    await core.tasks.run(async () => {
      core.mls = await MlsGroup.create(keyring.client, { persist: core.persist }).catch((e: unknown) => {
        throw fromMls(e);
      });
    });
    group.#attach();
    try {
      await core.tasks.run(() => group.#commits.announce(options));
    } catch (e) {
      // The store keeps the group: `restore` registers it at the relay again.
      group.#detach();
      throw e;
    }
    return group;
  }

  /**
   * Enters the relay's group session `sessionId` (we must be one of its participants) and waits,
   * in the background, for a Welcome: `whenJoined()` resolves once one was processed. Publish key
   * packages first (`Group.publishKeyPackages`) so that a member can add us. The relay queue is
   * read first (`sync()` resolves after it). A group already in the store is restored instead.
   */
  static async join(client: WmpClient, sessionId: string, options: GroupJoinOptions): Promise<Group> {
    const keyring = await keyringFor(client, options);
    const session = client.group(sessionId) ?? (await client.joinGroup(sessionId, callOptions(options)));
    const running = attached.get(session);
    if (running) return running;
    if ((await options.store.get(groupStateKey(sessionId))) !== undefined) {
      return Group.restore(client, sessionId, options);
    }
    const core = new GroupCore(client, session, keyring, options, NEW);
    await core.save();
    const group = new Group(core);
    group.#start();
    return group;
  }

  /**
   * The group of `sessionId` from the store, after a restart: the client must hold the session
   * (it resumes it from its own store). In the background it finishes what was interrupted
   * (registering the group, a commit whose answer never came), then reads what the relay queued
   * meanwhile; operations called meanwhile run after that, and `sync()` resolves after it.
   * Throws `ERR_GROUP_UNKNOWN`, `ERR_GROUP_STATE`, `ERR_GROUP_IDENTITY`.
   */
  static async restore(client: WmpClient, sessionId: string, options: GroupOptions): Promise<Group> {
    const keyring = await keyringFor(client, options);
    const session = client.group(sessionId);
    if (!session) throw new GroupError('ERR_GROUP_UNKNOWN');
    const running = attached.get(session);
    if (running) return running;
    const text = await options.store.get(groupStateKey(sessionId));
    if (text === undefined) throw new GroupError('ERR_GROUP_UNKNOWN');
    const record = decodeRecord(text, sessionId);
    const core = new GroupCore(client, session, keyring, options, record);
    if (record.mls) {
      core.mls = await MlsGroup.restore(record.mls, keyring.client, { persist: core.persist }).catch((e: unknown) => {
        throw fromMls(e);
      });
    }
    const group = new Group(core);
    group.#start();
    return group;
  }

  /**
   * Makes `count` (1..100) key packages for the client's identity, stores their private keys,
   * and publishes them at the relay (`ohan.mls.keypackage.publish`): each lets one member add us
   * to one group. Resolves with how many the relay accepted (it keeps a bounded number).
   */
  static async publishKeyPackages(client: WmpClient, count: number, options: KeyPackageOptions): Promise<number> {
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_KEY_PACKAGES_PER_PUBLISH) {
      throw new RangeError(`count must be 1..${MAX_KEY_PACKAGES_PER_PUBLISH}`);
    }
    const keyring = await keyringFor(client, options);
    const made = await keyring.createKeyPackages(count);
    const answer = await client.request(
      'ohan.mls.keypackage.publish',
      {
        key_packages: made.map((kp) => ({
          key_package: kp.keyPackage,
          cipher_suite: kp.cipherSuite,
          expires: kp.expires,
        })),
      },
      callOptions(options),
    );
    return isRecord(answer) && typeof answer.accepted === 'number' ? answer.accepted : 0;
  }

  /** The session ids of the groups kept in `store`. */
  static async stored(store: ClientStore): Promise<string[]> {
    const keys = await store.keys(GROUP_STORE_PREFIX);
    return keys.map(sessionIdOfKey).filter((id): id is string => id !== undefined);
  }

  // ---- what the application reads ----

  /** This member's DID. */
  get identity(): string {
    return this.#core.did;
  }

  /** The relay session the group runs in. */
  get session(): GroupSession {
    return this.#core.session;
  }

  /** The MLS group id (base64url), once joined. */
  get groupId(): string | undefined {
    return this.#core.mls?.groupId;
  }

  /** The current epoch, once joined (while a commit of ours waits for the relay, the one before it). */
  get epoch(): number | undefined {
    return this.#core.epoch;
  }

  /** The members' DIDs in leaf order (this member included); empty before joining and after removal. */
  get members(): readonly string[] {
    const mls = this.#core.mls;
    return mls?.active ? mls.members : [];
  }

  /** A Welcome for this member was processed. */
  get joined(): boolean {
    return this.#core.mls !== undefined;
  }

  /** Joined, not removed, not closed: it can send and read. */
  get active(): boolean {
    return this.#core.active;
  }

  /** This member was removed from the group. */
  get removed(): boolean {
    const mls = this.#core.mls;
    return mls !== undefined && !mls.active;
  }

  on<K extends keyof GroupEvents>(event: K, listener: Listener<GroupEvents[K]>): () => void {
    return this.#core.events.on(event, listener);
  }

  /** Resolves once a Welcome for us was processed; `ERR_GROUP_NOT_JOINED` after `timeoutMs` (default 30 s). */
  async whenJoined(options: ClientCallOptions = {}): Promise<void> {
    const core = this.#core;
    const until = Date.now() + (options.timeoutMs ?? DEFAULT_JOIN_TIMEOUT_MS);
    while (!core.mls) {
      options.signal?.throwIfAborted();
      if (core.closed) throw new GroupError('ERR_GROUP_CLOSED');
      const left = until - Date.now();
      if (left <= 0) throw new GroupError('ERR_GROUP_NOT_JOINED');
      await core.nextChange(left, options.signal);
    }
  }

  // ---- sending ----

  /**
   * Sends `body` encrypted to the group (core §5.2: the content is MLS-encrypted, `wmp` and a
   * routing copy of `to` stay in the clear), by default to every other member. A retry after a
   * dropped connection sends the same ciphertext with the same `clientMessageId`.
   */
  async send(body: unknown, options: GroupMessageOptions = {}): Promise<GroupSendResult> {
    const core = this.#core;
    const clientMessageId = options.clientMessageId ?? `cmsg-${b64urlEncode(randomBytes(16))}`;
    const expiresAt = options.expiresAt instanceof Date ? rfc3339(options.expiresAt.getTime()) : options.expiresAt;
    const sealed = await core.tasks.run(async (): Promise<Params> => {
      const mls = core.member();
      const to = options.to ? [...options.to] : mls.members.filter((m) => m !== core.did);
      if (to.length === 0) throw new GroupError('ERR_GROUP_NO_RECIPIENTS');
      const params = await mls
        .encryptParams({
          wmp: { client_message_id: clientMessageId, ...(expiresAt ? { expires_at: expiresAt } : {}) },
          to,
          content_type: options.contentType ?? 'application/json',
          body,
          ...(options.messageType ? { message_type: options.messageType } : {}),
          ...(options.inReplyTo ? { in_reply_to: options.inReplyTo } : {}),
        })
        .catch((e: unknown) => {
          throw fromMls(e);
        });
      return { ...params, to };
    });
    const answer = await core.request('wmp.message.deliver', sealed, options);
    const result = isRecord(answer) ? answer : {};
    return {
      messageId: str(result.message_id),
      clientMessageId,
      epoch: (sealed.wmp as { epoch: number }).epoch,
      status: str(result.status),
    };
  }

  // ---- commits ----

  /**
   * Adds `identity` (a participant of the group session) with a key package taken from the
   * relay (`ohan.mls.keypackage.fetch`): one commit for the members, one Welcome routed to it.
   * Throws `ERR_GROUP_NOT_PARTICIPANT`, `ERR_GROUP_NO_KEY_PACKAGE`, `ERR_GROUP_BAD_KEY_PACKAGE`,
   * `ERR_GROUP_MLS` (`already_member`), and as `update`.
   */
  async add(identity: string, options: ClientCallOptions = {}): Promise<GroupCommitResult> {
    this.#core.member();
    if (identity === this.identity || this.members.includes(identity)) {
      throw new GroupError('ERR_GROUP_MLS', { reason: 'already_member' });
    }
    if (!this.session.members.includes(identity)) throw new GroupError('ERR_GROUP_NOT_PARTICIPANT');
    const keyPackage = await this.#commits.takeKeyPackage(identity, options);
    return this.#commits.run(
      { method: 'wmp.mls.group.add', participant: identity },
      (mls) => mls.add(keyPackage),
      () => this.members.includes(identity),
      options,
    );
  }

  /**
   * Removes `identity` with a real Remove proposal: once the relay accepted the commit, it cannot
   * read anything sent after. Throws `ERR_GROUP_MLS` (`not_a_member`, `self_remove`) and as `update`.
   */
  async remove(identity: string, options: ClientCallOptions = {}): Promise<GroupCommitResult> {
    this.#core.member();
    if (identity === this.identity) throw new GroupError('ERR_GROUP_MLS', { reason: 'self_remove' });
    if (!this.members.includes(identity)) throw new GroupError('ERR_GROUP_MLS', { reason: 'not_a_member' });
    return this.#commits.run(
      { method: 'wmp.mls.group.remove', participant: identity },
      (mls) => mls.remove(identity),
      () => !this.members.includes(identity),
      options,
    );
  }

  /**
   * A commit with fresh keys for this member (post-compromise security). Throws
   * `ERR_GROUP_NOT_JOINED`, `ERR_GROUP_REMOVED`, `ERR_GROUP_CLOSED`, `ERR_GROUP_COMMIT_CONFLICT`,
   * `ERR_GROUP_OUT_OF_SYNC`, and the relay's refusals (`WmpError`).
   */
  update(options: ClientCallOptions = {}): Promise<GroupCommitResult> {
    return this.#commits.run(
      { method: 'wmp.mls.group.update' },
      (mls) => mls.update(),
      () => false,
      options,
    );
  }

  /**
   * Reads what the relay holds for this group session (`wmp.message.fetch`) and processes it in
   * order: commits, Welcomes, and encrypted messages, which go to the client's `message` listeners.
   * Anything already processed is recognised by its id and skipped.
   */
  sync(options: ClientCallOptions = {}): Promise<void> {
    if (this.#core.closed) return Promise.reject(new GroupError('ERR_GROUP_CLOSED'));
    return this.#core.tasks.run(() => this.#inbound.catchUp(options));
  }

  /**
   * Stops processing this group on this client (the relay keeps its messages until a `restore`)
   * and waits for the store writes. The group session itself stays open.
   */
  async close(): Promise<void> {
    const core = this.#core;
    if (core.closed) return;
    core.closed = true;
    this.#detach();
    core.changed();
    await core.tasks.idle();
    await core.acks.flush();
    await core.writer.flush();
  }

  // ---- internals ----

  #attach(): void {
    this.session.attach(this.#inbound.layer);
    attached.set(this.session, this);
  }

  #detach(): void {
    if (attached.get(this.session) === this) attached.delete(this.session);
    try {
      this.session.attach(undefined);
    } catch {
      // The client no longer holds the session: nothing is attached.
    }
  }

  /**
   * Attaches to the session, then (first in the task queue, in the background, so the caller can
   * add listeners before anything is reported) finishes what a restart interrupted and reads the
   * relay queue. Everything queued after it (a send, a commit) runs once it is done.
   */
  #start(): void {
    const core = this.#core;
    this.#attach();
    const report = (e: unknown) => core.reportUnexpected(e);
    void core.tasks
      .run(async () => {
        if (core.announce && core.mls) await this.#commits.announce({});
        await this.#commits.settlePending({});
      })
      .catch(report);
    void core.tasks.run(() => this.#inbound.catchUp({})).catch(report);
  }
}
