import { TimestampInvalidError, type WmpError } from '@wmp/jsonrpc-envelope';

/**
 * Why a `wmp.timestamp_token` was refused (-31011 `data.reason`, core §5.5, §8.5.2): it does not
 * parse as an RFC 3161 TimeStampToken (`token_malformed`), its imprint is not the SHA-256 content
 * hash (`token_imprint`), its CMS signature does not verify (`token_signature`), its TSA
 * certificate is not one the receiver trusts for time stamping (`token_untrusted`, with the chain
 * rule in `detail`), or it is no RFC 3161 token (`token_unsupported`: an `sct:` one).
 */
export const TIMESTAMP_TOKEN_FAILURES = [
  'token_malformed',
  'token_imprint',
  'token_signature',
  'token_untrusted',
  'token_unsupported',
] as const;

export type TimestampTokenFailure = (typeof TIMESTAMP_TOKEN_FAILURES)[number];

/** -31011 with `data.reason` and, where it helps, a `detail` from a fixed vocabulary. */
export function tokenFailure(reason: TimestampTokenFailure, detail?: string): WmpError {
  return new TimestampInvalidError(detail === undefined ? { reason } : { reason, detail });
}

/** What obtaining a token from a TSA can fail with (the sender's side; never a peer's input). */
export type TsaClientErrorCode =
  /** The TSA could not be reached, or did not answer in time. */
  | 'ERR_TSA_UNREACHABLE'
  /** It answered with another HTTP status or media type than `application/timestamp-reply`, or too much. */
  | 'ERR_TSA_HTTP'
  /** Its reply does not parse as a TimeStampResp holding a token. */
  | 'ERR_TSA_REPLY'
  /** It refused the request (`rejection`, `waiting`, ...); `status` and `failInfo` say how. */
  | 'ERR_TSA_REFUSED'
  /** Its token is for another request (imprint or nonce). */
  | 'ERR_TSA_MISMATCH'
  /** Its token does not verify against the TSA anchors (`cause` is the -31011 error). */
  | 'ERR_TSA_TOKEN';

const MESSAGES: Readonly<Record<TsaClientErrorCode, string>> = {
  ERR_TSA_UNREACHABLE: 'the time-stamping authority could not be reached',
  ERR_TSA_HTTP: 'the time-stamping authority answered with an unexpected HTTP response',
  ERR_TSA_REPLY: 'the time-stamping authority answered with something that is not a time-stamp reply',
  ERR_TSA_REFUSED: 'the time-stamping authority refused the request',
  ERR_TSA_MISMATCH: 'the time-stamping authority answered for another request',
  ERR_TSA_TOKEN: 'the time-stamp token does not verify',
};

/** A failure to obtain a time-stamp token, with a stable `code` and a fixed message. */
export class TsaClientError extends Error {
  readonly code: TsaClientErrorCode;
  /** HTTP status (ERR_TSA_HTTP) or PKIStatus (ERR_TSA_REFUSED), when there was one. */
  readonly status: number | undefined;
  constructor(code: TsaClientErrorCode, options: { status?: number; cause?: unknown } = {}) {
    super(MESSAGES[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TsaClientError';
    this.code = code;
    this.status = options.status;
  }
}
