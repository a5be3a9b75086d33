/** Every JSON-RPC and WMP error code (WMP core §3.8), by name. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  SessionNotFound: -31000,
  SessionExpired: -31001,
  NotAuthorized: -31002,
  EncryptionRequired: -31003,
  MlsError: -31004,
  CapabilityNotSupported: -31005,
  FlowError: -31006,
  RateLimited: -31007,
  ParticipantNotFound: -31008,
  EvidenceRequired: -31009,
  SignatureInvalid: -31010,
  TimestampInvalid: -31011,
  IdentityAssertionInvalid: -31012,
  VersionNotSupported: -31013,
  QueueFull: -31014,
  DelegationInvalid: -31015,
  ConsignmentModeUnsupported: -31016,
  AssuranceLevelUnsupported: -31017,
  PolicyUnsupported: -31018,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName];

/** The canonical `message` of each code. Never prefixed, never varied (docs/wmp-profile.md, "Errors"). */
export const ErrorMessage: Readonly<Record<ErrorCodeValue, string>> = {
  [-32700]: 'Parse error',
  [-32600]: 'Invalid Request',
  [-32601]: 'Method not found',
  [-32602]: 'Invalid params',
  [-32603]: 'Internal error',
  [-31000]: 'Session not found',
  [-31001]: 'Session expired',
  [-31002]: 'Not authorized',
  [-31003]: 'Encryption required',
  [-31004]: 'MLS error',
  [-31005]: 'Capability not supported',
  [-31006]: 'Flow error',
  [-31007]: 'Rate limited',
  [-31008]: 'Participant not found',
  [-31009]: 'Evidence required',
  [-31010]: 'Signature invalid',
  [-31011]: 'Timestamp invalid',
  [-31012]: 'Identity assertion invalid',
  [-31013]: 'Version not supported',
  [-31014]: 'Queue full',
  [-31015]: 'Delegation invalid',
  [-31016]: 'Consignment mode unsupported',
  [-31017]: 'Assurance level unsupported',
  [-31018]: 'Policy unsupported',
};

export function isErrorCode(code: unknown): code is ErrorCodeValue {
  return typeof code === 'number' && Object.hasOwn(ErrorMessage, code);
}
