/**
 * What the session engine needs of RFC 3161 timestamp tokens (core §5.5, §8.5.2), without loading
 * pkijs: `timestampVerifier` of `@wmp/session/timestamp` makes one from TSA trust anchors.
 */

/** A token that verified: when the TSA saw the content, and who the TSA is. */
export interface VerifiedTimestampToken {
  /** The TSA's time (TSTInfo genTime), ms since the epoch. */
  readonly genTime: number;
  /** The token's serial number, lowercase hex. */
  readonly serialNumber: string;
  /** The TSA policy the token was issued under (an OID). */
  readonly policy: string;
  /** The lowercase hex SHA-256 of the TSA's certificate. */
  readonly tsa: string;
}

/** Verifies a `wmp.timestamp_token` against the receiver's trusted TSAs. */
export interface TimestampTokenVerifier {
  /**
   * The token's time and TSA when it is a valid RFC 3161 token over `content` (the JCS bytes of
   * the message content, what a non-repudiation signature covers) from a trusted TSA at `now`;
   * throws -31011 `TimestampInvalidError` with `data.reason` otherwise.
   */
  verify(token: string, content: Uint8Array, now: number): Promise<VerifiedTimestampToken>;
}
