import { ErrorCode, type ErrorCodeName, type ErrorCodeValue, ErrorMessage, isErrorCode } from './error-codes.js';
import type { JsonRpcErrorObject, JsonRpcErrorResponse, JsonRpcId } from './message-types.js';

/**
 * Base of every error this project puts on the wire. The message is always the
 * canonical one for the code; details go in `data`, never in the message, so no
 * internals leak and peers can match on `code` alone.
 */
export class WmpError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, data?: unknown, message?: string) {
    super(message ?? (isErrorCode(code) ? ErrorMessage[code] : 'Server error'));
    this.name = 'WmpError';
    this.code = code;
    this.data = data;
  }

  /** The JSON-RPC `error` member. */
  toJsonRpc(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** A whole error response for `id` (null when the request id is unknown). */
  toResponse(id: JsonRpcId | null): JsonRpcErrorResponse {
    return { jsonrpc: '2.0', id, error: this.toJsonRpc() };
  }
}

export type WmpErrorClass = new (data?: unknown) => WmpError;

function defineError(name: ErrorCodeName): WmpErrorClass {
  const code: ErrorCodeValue = ErrorCode[name];
  const errorName = `${name}Error`;
  const cls = class extends WmpError {
    static readonly code = code;
    constructor(data?: unknown) {
      super(code, data);
      this.name = errorName;
    }
  };
  Object.defineProperty(cls, 'name', { value: errorName });
  return cls;
}

// One class per code, so callers can `catch (e) { if (e instanceof QueueFullError) ... }`.
export const ParseError = defineError('ParseError');
export const InvalidRequestError = defineError('InvalidRequest');
export const MethodNotFoundError = defineError('MethodNotFound');
export const InvalidParamsError = defineError('InvalidParams');
export const InternalError = defineError('InternalError');
export const SessionNotFoundError = defineError('SessionNotFound');
export const SessionExpiredError = defineError('SessionExpired');
export const NotAuthorizedError = defineError('NotAuthorized');
export const EncryptionRequiredError = defineError('EncryptionRequired');
export const MlsError = defineError('MlsError');
export const CapabilityNotSupportedError = defineError('CapabilityNotSupported');
export const FlowError = defineError('FlowError');
export const RateLimitedError = defineError('RateLimited');
export const ParticipantNotFoundError = defineError('ParticipantNotFound');
export const EvidenceRequiredError = defineError('EvidenceRequired');
export const SignatureInvalidError = defineError('SignatureInvalid');
export const TimestampInvalidError = defineError('TimestampInvalid');
export const IdentityAssertionInvalidError = defineError('IdentityAssertionInvalid');
export const VersionNotSupportedError = defineError('VersionNotSupported');
export const QueueFullError = defineError('QueueFull');
export const DelegationInvalidError = defineError('DelegationInvalid');
export const ConsignmentModeUnsupportedError = defineError('ConsignmentModeUnsupported');
export const AssuranceLevelUnsupportedError = defineError('AssuranceLevelUnsupported');
export const PolicyUnsupportedError = defineError('PolicyUnsupported');

const classByCode = new Map<number, WmpErrorClass>(
  [
    ParseError,
    InvalidRequestError,
    MethodNotFoundError,
    InvalidParamsError,
    InternalError,
    SessionNotFoundError,
    SessionExpiredError,
    NotAuthorizedError,
    EncryptionRequiredError,
    MlsError,
    CapabilityNotSupportedError,
    FlowError,
    RateLimitedError,
    ParticipantNotFoundError,
    EvidenceRequiredError,
    SignatureInvalidError,
    TimestampInvalidError,
    IdentityAssertionInvalidError,
    VersionNotSupportedError,
    QueueFullError,
    DelegationInvalidError,
    ConsignmentModeUnsupportedError,
    AssuranceLevelUnsupportedError,
    PolicyUnsupportedError,
  ].map((cls) => [(cls as unknown as { code: number }).code, cls]),
);

/** The error for a known code, as its own subclass. */
export function errorForCode(code: ErrorCodeValue, data?: unknown): WmpError {
  const cls = classByCode.get(code);
  return cls ? new cls(data) : new WmpError(code, data);
}

/**
 * Rebuilds an error received from a peer. Known codes become their subclass with the
 * canonical message; other codes (application errors) keep the peer's code and message.
 */
export function errorFromJsonRpc(error: JsonRpcErrorObject): WmpError {
  if (isErrorCode(error.code)) return errorForCode(error.code, error.data);
  return new WmpError(error.code, error.data, error.message);
}

/** Anything thrown by a handler, as what goes on the wire: internals never leak (docs/wmp-profile.md, "Errors"). */
export function toWmpError(thrown: unknown): WmpError {
  return thrown instanceof WmpError ? thrown : new InternalError();
}
