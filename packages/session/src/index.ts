export type { AuthAttempt, Authenticator } from './auth/authenticator.js';
export { type BearerOptions, bearerAuthenticator } from './auth/bearer.js';
export { signedChallengeAuthenticator } from './auth/signed-challenge.js';
export {
  type CapabilityUpdate,
  type OpenSessionOptions,
  type RestoredSessionState,
  type SessionErrorEvent,
  type SessionEvents,
  WmpSession,
} from './client-session.js';
export type { Connection, WmpContext } from './context.js';
export { ConnectionClosedError, PeerError, RequestTimeoutError } from './errors.js';
export {
  builtInFlowTypes,
  type FlowControl,
  FlowManager,
  type FlowManagerOptions,
  type FlowNotifier,
  type FlowRecord,
  type FlowState,
  type FlowType,
} from './flows.js';
export { newMessageId, newRequestId, newSecret, newSessionId, requestIdSequence } from './ids.js';
export { InMemoryTransport } from './in-memory-transport.js';
export { MemorySessionStore } from './memory-session-store.js';
export { type MlsJoin, openParams, type SessionCipher, sealParams } from './mls/cipher.js';
export { CONTENT_METHODS, encryptionRequiredFor, isEncrypted } from './mls/policy.js';
export {
  DEFAULT_SECURITY_POLICY,
  negotiateCapabilities,
  negotiateSecurity,
  negotiateVersion,
  type SecurityPolicy,
  updateCapabilities,
  WMP_VERSION,
} from './negotiate.js';
export {
  type BaseContext,
  type Interceptor,
  type NotificationHandler,
  Peer,
  type PeerOptions,
  type RequestHandler,
  type RequestOptions,
} from './peer.js';
export { WmpServer } from './server.js';
export type { MlsSessionProvider, ResolveOutcome, Resolver, ServerHooks, WmpServerOptions } from './services.js';
export {
  authenticated,
  issueToken,
  joined,
  resumeWith,
  type SessionChangeWith,
  takeChallenge,
} from './session-changes.js';
export {
  type ChallengeRecord,
  DEFAULT_PENDING_TTL_SECONDS,
  isExpired,
  isPending,
  MAX_PARTICIPANTS,
  type SessionRecord,
  type SessionState,
  type TokenRecord,
} from './session-model.js';
export {
  checkSessionStoreLimits,
  DEFAULT_SESSION_STORE_LIMITS,
  type SessionChange,
  type SessionCounts,
  type SessionStore,
  SessionStoreFullError,
  type SessionStoreLimits,
  sessionCapRefusal,
} from './session-store.js';
export { tokenHash } from './tokens.js';
export type { CloseReason, Transport, TransportMessageExtra, TransportSendOptions } from './transport.js';
