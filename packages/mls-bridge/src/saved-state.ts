import { fromUtf8, utf8 } from '@wmp/jcs-signing';
import { ByteReader, ByteWriter } from './byte-codec.js';
import { MlsBridgeError } from './errors.js';
import { type ClientState, decodeGroupState, encodeGroupState } from './ts-mls.js';

/** What kind of commit is waiting for the delivery service. */
export type CommitKind = 'add' | 'remove' | 'update';

/** A commit we made and sent, not yet accepted or refused by the delivery service. */
export interface PendingCommitRecord {
  readonly kind: CommitKind;
  /** The state the commit leads to; adopted by `confirmCommit()`. */
  readonly state: ClientState;
  /** The commit and Welcome as sent, so a restarted client can send them again. */
  readonly commit: string;
  readonly welcome: string | undefined;
}

export interface SavedGroup {
  readonly state: ClientState;
  readonly pending: PendingCommitRecord | undefined;
}

const MAGIC = utf8('WMPG');
const VERSION = 1;
const KINDS: readonly CommitKind[] = ['add', 'remove', 'update'];

/**
 * The saved form of a group: the current state and, while a commit is pending, the state it leads to.
 * Keeping both is a persistence rule (README): the pre-commit state survives until the commit is accepted.
 * The signature private key is left out: it is the participant's identity key, which the client
 * holds; `decodeSavedGroup` callers put it back. `clientConfig` is never serialized (ts-mls).
 */
export function encodeSavedGroup(state: ClientState, pending: PendingCommitRecord | undefined): Uint8Array {
  const w = new ByteWriter()
    .raw(MAGIC)
    .u8(VERSION)
    .bytes(encodeState(state))
    .u8(pending ? 1 : 0);
  if (pending) {
    w.u8(KINDS.indexOf(pending.kind))
      .bytes(encodeState(pending.state))
      .bytes(utf8(pending.commit))
      .bytes(utf8(pending.welcome ?? ''));
  }
  return w.finish();
}

function encodeState(state: ClientState): Uint8Array {
  return encodeGroupState({ ...state, signaturePrivateKey: new Uint8Array(0) });
}

/** Decoded states come back without `clientConfig` and signature key: `attach` adds them. */
export function decodeSavedGroup(bytes: Uint8Array, attach: (state: DecodedState) => ClientState): SavedGroup {
  if (!(bytes instanceof Uint8Array)) throw new MlsBridgeError('invalid_state');
  try {
    const r = new ByteReader(bytes);
    const magic = r.take(MAGIC.length);
    if (!magic.every((b, i) => b === MAGIC[i]) || r.u8() !== VERSION) throw new Error('not a saved group');
    const state = attach(decodeState(r.bytes()));
    let pending: PendingCommitRecord | undefined;
    if (r.u8() === 1) {
      const kind = KINDS[r.u8()];
      if (!kind) throw new Error('unknown commit kind');
      const next = attach(decodeState(r.bytes()));
      const commit = fromUtf8(r.bytes());
      const welcome = fromUtf8(r.bytes());
      pending = { kind, state: next, commit, welcome: welcome === '' ? undefined : welcome };
    }
    if (!r.done) throw new Error('trailing bytes');
    return { state, pending };
  } catch (e) {
    throw e instanceof MlsBridgeError ? e : new MlsBridgeError('invalid_state', { cause: e });
  }
}

export type DecodedState = Omit<ClientState, 'clientConfig'>;

function decodeState(bytes: Uint8Array): DecodedState {
  const decoded = decodeGroupState(bytes, 0);
  if (!decoded || decoded[1] !== bytes.length) throw new Error('group state does not decode');
  return decoded[0];
}
