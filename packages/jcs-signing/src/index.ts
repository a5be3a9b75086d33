export {
  b64urlDecode,
  b64urlEncode,
  concatBytes,
  fromHex,
  fromUtf8,
  randomBytes,
  timingSafeEqual,
  timingSafeEqualString,
  toHex,
  utf8,
} from './bytes.js';
export {
  type ChallengeClaims,
  createChallenge,
  signChallenge,
  type VerifyChallengeOptions,
  verifyChallenge,
  WMP_SKEW_SECONDS,
} from './challenge.js';
export { metadataOf, signedContentOf, withMetadata } from './content.js';
export {
  didJwk,
  didJwkFromPublicKey,
  didKey,
  didKeyFromPublicKey,
  didOf,
  kidForDid,
  publicKeyFromDidJwk,
  publicKeyFromDidKey,
} from './did.js';
export { didJwkKeyType, didKeyType } from './did-key-types.js';
export { CanonicalizationError, InvalidKeyError, JcsSigningError } from './errors.js';
export {
  EVIDENCE_JWS_TYPE,
  signEvidence,
  type VerifiedEvidence,
  type VerifyEvidenceOptions,
  verifyEvidence,
} from './evidence-signature.js';
export { jcs, jcsBytes } from './jcs.js';
export {
  type DetachedJwsHeader,
  decodeDetachedJws,
  type SignatureFailure,
  signDetached,
  type VerifiedJws,
  type VerifyDetachedOptions,
  verifyDetached,
} from './jws.js';
export {
  cryptoPath,
  generateKeypair,
  type Keypair,
  type KeypairOptions,
  keypairFromSeed,
  type Signer,
  sha256,
  verifyEd25519,
  verifyP256,
} from './keypair.js';
export {
  MANDATE_TYPE,
  type MandateClaims,
  type MandateFailure,
  signMandate,
  type VerifiedMandate,
  type VerifyMandateOptions,
  verifyMandate,
} from './mandate.js';
export { signMessage, type VerifiedMessage, type VerifyMessageOptions, verifyMessage } from './message-signature.js';
export {
  decodeEd25519Multikey,
  decodeMultikey,
  decodeX25519Multikey,
  encodeEd25519Multikey,
  encodeMultikey,
  encodeX25519Multikey,
  isSmallOrderX25519,
  isWeakEd25519,
  type MultikeyType,
  multikey,
} from './multikey.js';
export {
  appendRelayEntry,
  chainUnderEvidence,
  contentHash,
  MAX_RELAY_HOPS,
  type RelayHop,
  relayChainWith,
  signOwnEntry,
  type VerifyRelayChainOptions,
  verifyRelayChain,
} from './relay-chain.js';
export {
  DEFAULT_REPLAY_MAX_ENTRIES,
  type ReplayCache,
  type ReplayCacheLimits,
  type ReplayScope,
  replayCacheBounds,
} from './replay-cache/contract.js';
export {
  ReplayCacheFullError,
  type ReplayCacheRefusalReason,
  ReplayCacheUnavailableError,
  replayCacheRefusalReason,
} from './replay-cache/errors.js';
export { MemoryReplayCache, type MemoryReplayCacheOptions } from './replay-cache/memory-replay-cache.js';
export { chainResolvers, didKeyResolver, type KeyResolver } from './resolver.js';
export {
  MAX_X5C_CERTIFICATES,
  type MessageSigner,
  parseX5cHeader,
  type X5cChainVerifier,
  type X5cLeafKey,
  type X5cSigner,
} from './x5c.js';
