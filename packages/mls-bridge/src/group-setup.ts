// The ts-mls state a member starts from: a group it creates, one it joins from a Welcome, or one
// restored from `save()` bytes. `MlsGroup`'s static constructors adopt what these return.
import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import { cipherSuiteIdOf } from './cipher-suites.js';
import { clientInternals, type MlsClient } from './client.js';
import { MlsBridgeError } from './errors.js';
import type { PendingCommitState } from './group-types.js';
import { credentialMatchesKey, identityOf } from './identity.js';
import { generateOwnKeyPackage, KEY_PACKAGE_LIFETIME_SECONDS } from './key-package.js';
import { type DecodedState, decodeSavedGroup } from './saved-state.js';
import { leafAt } from './tree.js';
import { type ClientState, createGroup, emptyPskIndex, joinGroup, zeroOutUint8Array } from './ts-mls.js';
import { decodeMessage } from './wire.js';

/** A joined state, and the step that forgets the key package it used (after the state is saved). */
export interface JoinedGroupState {
  readonly state: ClientState;
  readonly forgetKeyPackage: () => Promise<void>;
}

/** A new group with `client` as its only member, at epoch 0. */
export async function createdGroupState(client: MlsClient, groupId: Uint8Array | undefined): Promise<ClientState> {
  const i = clientInternals(client);
  const id = groupId ?? randomBytes(16);
  if (!(id instanceof Uint8Array) || id.length === 0 || id.length > 255) {
    throw new MlsBridgeError('invalid_params');
  }
  // The creator's leaf comes from a key package nobody else sees as such; its lifetime still
  // travels in the tree until the creator's next commit, so it gets the usual one.
  const kp = await generateOwnKeyPackage(
    client.identity,
    i.publicKey,
    i.seed.slice(),
    client.cipherSuite,
    KEY_PACKAGE_LIFETIME_SECONDS,
  );
  const state = await createGroup(id.slice(), kp.publicPackage, kp.privatePackage, [], i.cs, i.config);
  zeroOutUint8Array(kp.privatePackage.initPrivateKey);
  return state;
}

/** The state a Welcome (base64url) made for one of `client`'s key packages leads to. */
export async function joinedGroupState(client: MlsClient, welcome: string): Promise<JoinedGroupState> {
  const i = clientInternals(client);
  const w = decodeMessage(welcome, 'mls_welcome').welcome;
  if (cipherSuiteIdOf(w.cipherSuite) !== client.cipherSuite) throw new MlsBridgeError('welcome_not_for_us');
  const own = i.findKeyPackage(new Set(w.secrets.map((s) => b64urlEncode(s.newMember))));
  if (!own) throw new MlsBridgeError('welcome_not_for_us');
  let state: ClientState;
  try {
    state = await joinGroup(
      w,
      own.publicPackage,
      { ...own.privatePackage, signaturePrivateKey: i.seed.slice() },
      emptyPskIndex,
      i.cs,
      undefined,
      undefined,
      i.config,
    );
  } catch (e) {
    throw new MlsBridgeError('invalid_welcome', { cause: e });
  }
  const forgetKeyPackage = async () => {
    await i.consumeKeyPackage(own.published.ref);
    zeroOutUint8Array(own.privatePackage.initPrivateKey);
  };
  return { state, forgetKeyPackage };
}

/**
 * The state and pending commit in `save()` bytes, with `client`'s signature key put back after
 * checking the saved leaf is this client's. Throws `invalid_state`.
 */
export function restoredGroupState(
  saved: Uint8Array,
  client: MlsClient,
): { state: ClientState; pending: PendingCommitState | undefined } {
  const i = clientInternals(client);
  const attach = (s: DecodedState): ClientState => {
    const state: ClientState = { ...s, signaturePrivateKey: i.seed.slice(), clientConfig: i.config };
    const own = leafAt(state.ratchetTree, state.privatePath.leafIndex);
    // A removed member's leaf is gone from the tree; its state can do nothing but say so.
    const removed = state.groupActiveState.kind === 'removedFromGroup';
    const ours =
      cipherSuiteIdOf(state.groupContext.cipherSuite) === client.cipherSuite &&
      (removed ||
        (own !== undefined &&
          identityOf(own.credential) === client.identity &&
          credentialMatchesKey(own.credential, i.publicKey, client.cipherSuite)));
    if (!ours) throw new MlsBridgeError('invalid_state');
    return state;
  };
  const { state, pending } = decodeSavedGroup(saved, attach);
  return { state, pending: pending && { ...pending, epoch: state.groupContext.epoch, consumed: [] } };
}
