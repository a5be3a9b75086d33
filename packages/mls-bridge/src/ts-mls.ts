/**
 * The one place this package imports ts-mls from. ts-mls is pinned at 1.6.4: 2.0 changes every call
 * (single object parameters, `getCiphersuiteImpl("NAME")`), so an upgrade starts here. The subpath
 * imports reach functions 1.6.4 does not re-export from its root:
 * - `makeKeyPackageRef`, `verifyKeyPackage` and `verifyLeafNodeSignatureKeyPackage`, to check that
 *   a Welcome is for us and that a key package is self-signed before anything else looks at it;
 * - `unprotectPrivateMessage`, because `processMessage` drops the sender of an application
 *   message, and WMP needs the authenticated sender to check `wmp.sender`.
 */
export {
  type AuthenticationService,
  type Capabilities,
  type CiphersuiteImpl,
  type CiphersuiteName,
  type ClientConfig,
  type ClientState,
  type CreateCommitOptions,
  type Credential,
  createApplicationMessage,
  createCommit,
  createGroup,
  createGroupInfoWithExternalPubAndRatchetTree,
  createProposal,
  decodeGroupState,
  decodeMlsMessage,
  defaultKeyPackageEqualityConfig,
  defaultKeyRetentionConfig,
  defaultLifetimeConfig,
  defaultPaddingConfig,
  type EpochReceiverData,
  emptyPskIndex,
  encodeGroupState,
  encodeMlsMessage,
  generateKeyPackageWithKey,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  type IncomingMessageCallback,
  joinGroup,
  type KeyPackage,
  type KeyRetentionConfig,
  type KeySchedule,
  type MLSMessage,
  nobleCryptoProvider,
  type PrivateKeyPackage,
  type PrivateMessage,
  type Proposal,
  type ProposalWithSender,
  processMessage,
  type RatchetTree,
  type Welcome,
  zeroOutUint8Array,
} from 'ts-mls';
export { makeKeyPackageRef, verifyKeyPackage } from 'ts-mls/keyPackage.js';
export { verifyLeafNodeSignatureKeyPackage } from 'ts-mls/leafNode.js';
export { unprotectPrivateMessage } from 'ts-mls/messageProtection.js';
