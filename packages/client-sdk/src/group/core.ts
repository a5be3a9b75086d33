import { WmpError } from '@wmp/jsonrpc-envelope';
import type { MlsGroup } from '@wmp/mls-bridge';
import { RequestTimeoutError } from '@wmp/session';
import type { WmpClient } from '../client/client.js';
import { Emitter } from '../client/emitter.js';
import { isConnectionLost } from '../client/failures.js';
import type { GroupSession } from '../client/group-session.js';
import type { ClientCallOptions } from '../client/types.js';
import { GroupError } from './errors.js';
import { type Clear, isRecord, type Params, str } from './incoming.js';
import type { Keyring } from './keyring.js';
import { encodeRecord, groupStateKey, SeenIds, SerialWriter, type Submission } from './record.js';
import { AckBatch, TaskQueue } from './tasks.js';
import type { GroupErrorEvent, GroupEvents, GroupOptions } from './types.js';

const DEFAULTS = { maxCommitRetries: 5, sendRetries: 3, maxPendingMessages: 1000 } as const;
/** Pages of `wmp.message.fetch` one reading of the queue takes at most (100 messages each). */
const MAX_FETCH_PAGES = 50;

/** What a group starts from: nothing (new) or its stored record. */
export interface Initial {
  readonly announce: boolean;
  readonly mls: Uint8Array | undefined;
  readonly submission: Submission | undefined;
  readonly seen: readonly string[];
}

export type About = Partial<Omit<GroupErrorEvent, 'error'>>;

/** A dropped connection or a timeout: the same request may be sent again. */
export function isRetryable(e: unknown): boolean {
  return isConnectionLost(e) || e instanceof RequestTimeoutError;
}

export function callOptions(options: ClientCallOptions): ClientCallOptions {
  return {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
}

export function aboutOf(clear: Clear): Omit<About, 'method'> {
  return {
    ...(clear.messageId === undefined ? {} : { messageId: clear.messageId }),
    ...(clear.sender === undefined ? {} : { sender: clear.sender }),
    ...(clear.epoch === undefined ? {} : { epoch: clear.epoch }),
  };
}

/**
 * The state one `Group` shares between its parts (what arrives, our commits, the public calls):
 * the MLS group, its stored record, the task queue everything touching the MLS state runs in,
 * acknowledgements, events, and requests on the group session. Internal to the package.
 */
export class GroupCore {
  readonly id: string;
  readonly client: WmpClient;
  readonly session: GroupSession;
  readonly keyring: Keyring;
  readonly did: string;
  readonly maxCommitRetries: number;
  readonly sendRetries: number;
  readonly seen: SeenIds;
  readonly events: Emitter<GroupEvents>;
  readonly tasks: TaskQueue;
  readonly acks: AckBatch;
  readonly writer: SerialWriter;
  mls: MlsGroup | undefined;
  /** `wmp.mls.group.create` still has to reach the relay. */
  announce: boolean;
  /** How our pending commit is sent (method, participant), kept with it in the store. */
  submission: Submission | undefined;
  /** Ids of the message being processed: written with the state its processing produces. */
  inflight: readonly string[] = [];
  closed = false;
  /** The MLS state last written to the store. */
  #savedMls: Uint8Array | undefined;
  readonly #changes = new Set<() => void>();

  constructor(client: WmpClient, session: GroupSession, keyring: Keyring, options: GroupOptions, initial: Initial) {
    this.id = session.id;
    this.client = client;
    this.session = session;
    this.keyring = keyring;
    this.did = client.did;
    this.maxCommitRetries = options.maxCommitRetries ?? DEFAULTS.maxCommitRetries;
    this.sendRetries = options.sendRetries ?? DEFAULTS.sendRetries;
    this.writer = new SerialWriter(options.store, groupStateKey(session.id));
    this.seen = new SeenIds(initial.seen);
    this.announce = initial.announce;
    this.submission = initial.submission;
    this.#savedMls = initial.mls;
    this.events = new Emitter<GroupEvents>((error, event) => {
      if (event !== 'error') this.report(new GroupError('ERR_GROUP_LISTENER', { cause: error }));
    });
    this.tasks = new TaskQueue(options.maxPendingMessages ?? DEFAULTS.maxPendingMessages);
    this.acks = new AckBatch((ids) => client.notify('wmp.message.ack', { message_ids: ids, status: 'processed' }));
  }

  get epoch(): number | undefined {
    return this.mls?.epoch;
  }

  get active(): boolean {
    return !this.closed && this.mls?.active === true;
  }

  // ---- the store ----

  /** mls-bridge's persist hook: the new MLS state, written with the ids of the message that produced it. */
  readonly persist = (bytes: Uint8Array): Promise<void> =>
    this.writer.write(
      () => this.#encode(bytes),
      () => {
        this.#savedMls = bytes;
      },
    );

  /** Writes the record with the MLS state as last stored (after a change of anything else). */
  save(): Promise<void> {
    return this.writer.write(() => this.#encode(this.#savedMls));
  }

  #encode(mls: Uint8Array | undefined): string {
    return encodeRecord({
      v: 1,
      sessionId: this.id,
      announce: this.announce,
      mls,
      submission: this.submission,
      seen: this.seen.list(this.inflight),
    });
  }

  // ---- state ----

  /** The group, usable for sending and committing; otherwise the reason it is not. */
  member(): MlsGroup {
    if (this.closed) throw new GroupError('ERR_GROUP_CLOSED');
    if (!this.mls) throw new GroupError('ERR_GROUP_NOT_JOINED');
    if (!this.mls.active) throw new GroupError('ERR_GROUP_REMOVED');
    return this.mls;
  }

  /** Something waiters care about changed (joined, epoch, closed). */
  changed(): void {
    for (const wake of [...this.#changes]) wake();
  }

  /** Resolves at the next change or after `ms`. */
  nextChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#changes.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      (timer as { unref?: () => void }).unref?.();
      this.#changes.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  // ---- reporting and acknowledging ----

  report(error: GroupError, about: About = {}): void {
    this.events.emit('error', {
      error,
      ...(about.method === undefined ? {} : { method: about.method }),
      ...(about.messageId === undefined ? {} : { messageId: about.messageId }),
      ...(about.sender === undefined ? {} : { sender: about.sender }),
      ...(about.epoch === undefined ? {} : { epoch: about.epoch }),
    });
  }

  /** A failure of background work: reaching the relay (`ERR_GROUP_OUT_OF_SYNC`), or the store (`ERR_GROUP_STATE`). */
  reportUnexpected(e: unknown, about: About = {}): void {
    if (e instanceof GroupError) this.report(e, about);
    else if (isRetryable(e) || e instanceof WmpError) {
      this.report(new GroupError('ERR_GROUP_OUT_OF_SYNC', { cause: e }), about);
    } else this.report(new GroupError('ERR_GROUP_STATE', { cause: e }), about);
  }

  ack(messageId: string | undefined): void {
    if (messageId !== undefined) this.acks.add(messageId);
  }

  /** A message is dealt with for good: remember it (stored), then acknowledge it. */
  async finish(clear: Clear): Promise<void> {
    this.seen.add(clear.ids);
    await this.save();
    this.ack(clear.messageId);
  }

  // ---- the relay ----

  /** A request on the group session, sent again (the same params) after a dropped connection. */
  async request(method: string, params: Params, options: ClientCallOptions): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.session.request(method, params, callOptions(options));
      } catch (e) {
        if (this.closed || attempt >= this.sendRetries || !isRetryable(e)) throw e;
      }
    }
  }

  /** Pages through this session's relay queue (`wmp.message.fetch`) in order; `visit` returns true to stop. */
  async fetchQueue(
    visit: (message: Params) => Promise<boolean | undefined>,
    options: ClientCallOptions,
  ): Promise<void> {
    let after: string | undefined;
    for (let page = 0; page < MAX_FETCH_PAGES; page++) {
      const answer = await this.request(
        'wmp.message.fetch',
        { sessions: [this.id], limit: 100, ...(after === undefined ? {} : { after }) },
        options,
      );
      const result = isRecord(answer) ? answer : {};
      const messages = Array.isArray(result.messages) ? result.messages : [];
      for (const m of messages) if (isRecord(m) && (await visit(m)) === true) return;
      after = str(result.next);
      if (result.has_more !== true || after === undefined) return;
    }
  }
}
