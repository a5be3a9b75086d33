import { b64urlDecode, b64urlEncode } from '@wmp/jcs-signing';
import type { ClientStore } from '../store/store.js';
import { GroupError } from './errors.js';

/** Every key a `Group` writes starts with it: `group/<session-id>/state`, `group/key-packages`. */
export const GROUP_STORE_PREFIX = 'group/';
/** The unused key packages of the store's identity, with their private keys. */
export const KEY_PACKAGES_STORE_KEY = 'group/key-packages';

/** Ids remembered per group to recognise a message processed before (the relay delivers at least once). */
export const MAX_SEEN_IDS = 512;

const SESSION_ID = /^ses-[A-Za-z0-9]+$/;

export function groupStateKey(sessionId: string): string {
  return `${GROUP_STORE_PREFIX}${sessionId}/state`;
}

/** The session id of a `group/<session-id>/state` key, if it is one. */
export function sessionIdOfKey(key: string): string | undefined {
  const m = /^group\/(ses-[A-Za-z0-9]+)\/state$/.exec(key);
  return m?.[1];
}

export function isSessionId(x: unknown): x is string {
  return typeof x === 'string' && x.length <= 256 && SESSION_ID.test(x);
}

/** A commit of ours sent (or about to be) to the relay: what a resubmission after a restart needs. */
export interface Submission {
  readonly method: 'wmp.mls.group.add' | 'wmp.mls.group.remove' | 'wmp.mls.group.update';
  readonly participant?: string;
}

/** One group as stored: the MLS state and what the relay exchange needs, in one value (one atomic write). */
export interface GroupRecord {
  readonly v: 1;
  readonly sessionId: string;
  /** `wmp.mls.group.create` still has to be (re)sent: the creator's group is not registered at the relay yet. */
  readonly announce: boolean;
  /** mls-bridge `MlsGroup.save()` bytes; absent while waiting for a Welcome. */
  readonly mls: Uint8Array | undefined;
  readonly submission: Submission | undefined;
  /** Message ids processed (`m:<message_id>`, `c:<sender> <client_message_id>`), oldest first. */
  readonly seen: readonly string[];
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const METHODS: ReadonlySet<string> = new Set(['wmp.mls.group.add', 'wmp.mls.group.remove', 'wmp.mls.group.update']);

export function encodeRecord(r: GroupRecord): string {
  return JSON.stringify({
    v: 1,
    sessionId: r.sessionId,
    announce: r.announce,
    ...(r.mls ? { mls: b64urlEncode(r.mls) } : {}),
    ...(r.submission ? { submission: r.submission } : {}),
    seen: r.seen,
  });
}

/** The stored record; `ERR_GROUP_STATE` for anything that is not one of this session. */
export function decodeRecord(text: string, sessionId: string): GroupRecord {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch (e) {
    throw new GroupError('ERR_GROUP_STATE', { cause: e });
  }
  if (!isObject(x) || x.v !== 1 || x.sessionId !== sessionId || typeof x.announce !== 'boolean') {
    throw new GroupError('ERR_GROUP_STATE');
  }
  let mls: Uint8Array | undefined;
  if (x.mls !== undefined) {
    if (typeof x.mls !== 'string') throw new GroupError('ERR_GROUP_STATE');
    try {
      mls = b64urlDecode(x.mls);
    } catch (e) {
      throw new GroupError('ERR_GROUP_STATE', { cause: e });
    }
  }
  let submission: Submission | undefined;
  if (x.submission !== undefined) {
    const s = x.submission;
    if (!isObject(s) || !METHODS.has(s.method as string)) throw new GroupError('ERR_GROUP_STATE');
    if (s.participant !== undefined && typeof s.participant !== 'string') throw new GroupError('ERR_GROUP_STATE');
    submission = {
      method: s.method as Submission['method'],
      ...(s.participant === undefined ? {} : { participant: s.participant as string }),
    };
  }
  const seen = Array.isArray(x.seen) ? x.seen.filter((s): s is string => typeof s === 'string') : [];
  return { v: 1, sessionId, announce: x.announce, mls, submission, seen: seen.slice(-MAX_SEEN_IDS) };
}

/** The ids of messages processed, bounded (oldest forgotten first). */
export class SeenIds {
  readonly #order: string[];
  readonly #set: Set<string>;

  constructor(ids: readonly string[] = []) {
    this.#order = ids.slice(-MAX_SEEN_IDS);
    this.#set = new Set(this.#order);
  }

  hasAny(ids: readonly string[]): boolean {
    return ids.some((id) => this.#set.has(id));
  }

  add(ids: readonly string[]): void {
    for (const id of ids) {
      if (this.#set.has(id)) continue;
      this.#set.add(id);
      this.#order.push(id);
    }
    while (this.#order.length > MAX_SEEN_IDS) this.#set.delete(this.#order.shift()!);
  }

  /** The list as stored, with `extra` (ids being processed) appended. */
  list(extra: readonly string[] = []): string[] {
    const out = [...this.#order, ...extra.filter((id) => !this.#set.has(id))];
    return out.slice(-MAX_SEEN_IDS);
  }
}

/**
 * Writes one key, one write at a time, in call order: a later write never lands before an
 * earlier one (an old MLS state over a newer one would reuse keys after a restart).
 */
export class SerialWriter {
  readonly #store: ClientStore;
  readonly #key: string;
  #tail: Promise<void> = Promise.resolve();

  constructor(store: ClientStore, key: string) {
    this.#store = store;
    this.#key = key;
  }

  /**
   * `value` is computed when the write runs (so it holds what is current then); `written` runs
   * once it is stored, before any later write starts.
   */
  write(value: () => string, written?: () => void): Promise<void> {
    const run = this.#tail.then(async () => {
      await this.#store.set(this.#key, value());
      written?.();
    });
    this.#tail = run.catch(() => undefined);
    return run;
  }

  flush(): Promise<void> {
    return this.#tail;
  }
}
