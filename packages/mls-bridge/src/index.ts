export {
  type CipherSuiteId,
  isSupportedCipherSuite,
  SIGNATURE_ALGORITHM,
  SUPPORTED_CIPHER_SUITES,
} from './cipher-suites.js';
export { type KeyRetention, MlsClient, type MlsClientOptions } from './client.js';
export { MlsBridgeError, type MlsFailureReason } from './errors.js';
export { MlsGroup } from './group.js';
export type {
  CommitResult,
  CreateGroupOptions,
  DecryptedMessage,
  DecryptParamsOptions,
  EncryptedMessage,
  MlsGroupOptions,
  PendingCommit,
  ProcessedMessage,
} from './group-types.js';
export { type MlsIdentity, signatureKeyOfDid } from './identity.js';
export {
  KEY_PACKAGE_LIFETIME_SECONDS,
  type PublishedKeyPackage,
  type VerifiedKeyPackage,
  verifyKeyPackage,
} from './key-package.js';
export { didJwkFromP256PublicKey } from './p256.js';
export { generateP256Identity, p256IdentityFromSecret } from './p256-identity.js';
export type { CommitKind } from './saved-state.js';
export { inspectMessage, type MlsMessageInfo } from './wire.js';
