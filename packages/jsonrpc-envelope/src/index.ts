export { BoundedMap, BoundedSet } from './bounded.js';
export { createErrorResponse, createNotification, createRequest, createResponse } from './create.js';
export { ErrorCode, type ErrorCodeName, type ErrorCodeValue, ErrorMessage, isErrorCode } from './error-codes.js';
export {
  AssuranceLevelUnsupportedError,
  CapabilityNotSupportedError,
  ConsignmentModeUnsupportedError,
  DelegationInvalidError,
  EncryptionRequiredError,
  EvidenceRequiredError,
  errorForCode,
  errorFromJsonRpc,
  FlowError,
  IdentityAssertionInvalidError,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  MlsError,
  NotAuthorizedError,
  ParseError,
  ParticipantNotFoundError,
  PolicyUnsupportedError,
  QueueFullError,
  RateLimitedError,
  SessionExpiredError,
  SessionNotFoundError,
  SignatureInvalidError,
  TimestampInvalidError,
  toWmpError,
  VersionNotSupportedError,
  WmpError,
  type WmpErrorClass,
} from './errors.js';
export { DEFAULT_PARSE_LIMITS, MIN_MESSAGE_BYTES, type ParseLimits } from './limits.js';
export { isErrorResponse, isNotification, isRequest, isResponse, recoverId, toMessage } from './message.js';
export type {
  JsonRpcErrorObject,
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcParams,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcSuccessResponse,
} from './message-types.js';
export { MethodRegistry, MethodRegistryError, type MethodRegistryFailure } from './method-registry.js';
export {
  coreMethods,
  isKnownMethod,
  Method,
  type MethodName,
  type ParamsOf,
  type ResultOf,
  wmpMethods,
} from './methods.js';
export { ipLiteralOf, isLoopbackAddress, isLoopbackHost, isPrivateAddress } from './net-addresses.js';
export {
  type BatchEntry,
  type InvalidBatchEntry,
  isInvalidEntry,
  type ParsedInput,
  parseMessage,
  parseSingleMessage,
} from './parse.js';
export {
  type Auth,
  AuthSchema,
  type Capabilities,
  CapabilitiesSchema,
  type Security,
  type SecurityMode,
  SecurityModeSchema,
  SecuritySchema,
} from './schemas/capabilities.js';
export {
  EVIDENCE_EVENT_TYPES,
  EVIDENCE_REASON_CODES,
  type EvidenceEventType,
  type EvidenceReasonCode,
  type EvidenceRecord,
  EvidenceRecordSchema,
  parseEvidenceRecord,
} from './schemas/evidence.js';
export { FlowStateSchema } from './schemas/flow.js';
export {
  AckStatusSchema,
  ConsignmentModeSchema,
  DeliverResultStatusSchema,
  MessageStatusSchema,
} from './schemas/messaging.js';
export {
  DETACHED_JWS_PATTERN,
  type IdentityAssertion,
  IdentityAssertionSchema,
  type RelayEntry,
  RelayEntrySchema,
  type SenderDelegate,
  SenderDelegateSchema,
  ServiceClassSchema,
  type WmpMetadata,
  WmpMetadataSchema,
} from './schemas/metadata.js';
export {
  type ContentRules,
  eitherMethod,
  type InitiatorRoute,
  type MethodAccess,
  type MethodKind,
  type MethodRules,
  type MethodSpec,
  methodParams,
  methodResult,
  notificationMethod,
  requestMethod,
} from './schemas/method-spec.js';
export { MAX_KEY_PACKAGES_PER_PUBLISH, ohanMethods } from './schemas/ohan.js';
export { isInexactInteger, parseStrictJson, utf8Length } from './strict-json.js';
export { rfc3339 } from './time.js';
export { validateParams, validateResult } from './validate.js';
