/**
 * `@wmp/session/timestamp`: RFC 3161 trusted timestamps for WMP messages (core §5.5, §8.5.2), on
 * pkijs: a TSA client that obtains a token over a message's content hash, and the verification
 * of a `wmp.timestamp_token` (signature, TSA certificate chained to TSA anchors with the
 * `timeStamping` purpose, imprint). A subpath of its own so that applications without timestamps
 * never load pkijs; browser-safe (fetch and WebCrypto).
 */

export {
  TIMESTAMP_TOKEN_FAILURES,
  type TimestampTokenFailure,
  TsaClientError,
  type TsaClientErrorCode,
} from './timestamp/failures.js';
export {
  type ObtainedTimestampToken,
  TsaClient,
  type TsaClientOptions,
  type TsaFetch,
  timestampVerifier,
} from './timestamp/tsa-client.js';
export { MAX_TOKEN_CHARS, verifyTimestampToken } from './timestamp/verify-token.js';
export type { TimestampTokenVerifier, VerifiedTimestampToken } from './timestamp-tokens.js';
