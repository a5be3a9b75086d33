export { BOX_ERROR_CODES, type BoxErrorCode, isBoxErrorCode } from './box-error-codes.js';
export {
  type CardVerdict,
  type CreateCardInput,
  cardStampStrength,
  createCard,
  isBoxOrigin,
  isNewerCard,
  type OhanCard,
  verifyCard,
} from './card.js';
export { type CreateEventInput, createEvent, signEvent } from './create.js';
export { cryptoPath } from './crypto-path.js';
export { parseUtcTime } from './encoding.js';
export { OhanError, OhanOpenError, OhanSealError, type OpenFailure, type SealFailure } from './errors.js';
export {
  checkEventShape,
  idPreimage,
  type OhanEvent,
  type Stamp,
  type StoredEvent,
  signedText,
  type UnsignedEvent,
  unsignedPart,
} from './event.js';
export { type EncKeypair, encKeypairFromSecret, generateEncKeypair } from './keys.js';
export { MemoryNonceCache, type MemoryNonceCacheOptions, type NonceCache, NonceCacheFullError } from './nonces.js';
export { type OpenedEvent, openEvent } from './open.js';
export {
  CARD_PROTOCOL,
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_STRANGER_BITS,
  DEFAULT_TTL_SECONDS,
  EVENT_KIND,
  EVENT_PROTOCOL,
  MAX_TTL_SECONDS,
  NONCE_TTL_SECONDS,
  OHAN_API_PATH,
  OHAN_SKEW_SECONDS,
  SEAL_SUITE,
} from './profile.js';
export {
  REQUEST_AUTH_SCHEME,
  type RequestBody,
  type RequestClaims,
  type RequestFailure,
  type RequestVerdict,
  type SignRequestInput,
  signRequest,
  type VerifyRequestInput,
  verifyRequest,
} from './request.js';
export {
  openPayload,
  paddedLength,
  padEnvelope,
  type SealRandomness,
  type SealRecipient,
  sealAad,
  sealEnvelope,
  sealKey,
  unpadEnvelope,
} from './seal.js';
export {
  leadingZeroBits,
  type MintOptions,
  type MintProgress,
  mintStamp,
  mintStampFor,
  stampStrength,
} from './stamp.js';
export {
  completeEventVerification,
  type EventFailure,
  type EventSignatureCheck,
  type EventVerdict,
  type PreparedEventVerdict,
  prepareEventVerification,
  type VerifyEventOptions,
  verifyEvent,
} from './verify.js';
