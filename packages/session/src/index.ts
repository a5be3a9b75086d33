export {
  MemoryReplayCache,
  type MemoryReplayCacheOptions,
  type ReplayCache,
  ReplayCacheFullError,
  type ReplayCacheRefusalReason,
  ReplayCacheUnavailableError,
  replayCacheRefusalReason,
} from '@wmp/jcs-signing';
export {
  ASSERTION_REJECTION_REASONS,
  type AssertionChecker,
  type AssertionContext,
  type AssertionDiagnostics,
  type AssertionRejectionReason,
  assertionRejected,
  type TrustHintOutcome,
  type VerifiedAssertion,
} from './assertions/checker.js';
export {
  type AssertionRefusal,
  assertionRefusalOf,
  type IdentityPresenter,
  openPresenting,
} from './assertions/presenter.js';
export { type AuthAttempt, type Authenticator, type AuthOutcome, authOutcome } from './auth/authenticator.js';
export { type BearerOptions, bearerAuthenticator } from './auth/bearer.js';
export {
  type DidDocument,
  type DidDocumentFetcher,
  type DidFetchResponse,
  DidResolutionError,
  type DidResolutionFailure,
  DidWebResolver,
  type DidWebResolverOptions,
  didWebUrl,
  findVerificationKey,
  parseDidDocument,
  type ResolvedKey,
  type VerificationRelationship,
  type WebDidFetcherOptions,
  webDidFetcher,
} from './auth/did-web.js';
export { type DpopOptions, type DpopProofOptions, dpopAuthenticator, verifyDpopProof } from './auth/dpop.js';
export { identifierProblem } from './auth/identifier-syntax.js';
export { JWS_ALGORITHMS, type JwsAlgorithm, type JwsSigner, signJws, webCryptoSigner } from './auth/jws.js';
export { AUTH_FAILURE_REASONS, type AuthFailureReason } from './auth/reasons.js';
export {
  type ExpectedResponder,
  type ResponderIdentity,
  responderAuth,
  verifyResponderAuth,
} from './auth/responder.js';
export { acceptedSchemes, checkSenderScheme, schemeCovers, schemeFamilies, schemeOf } from './auth/schemes.js';
export { type SignedChallengeOptions, signedChallengeAuthenticator } from './auth/signed-challenge.js';
export type { TrustAnchors } from './auth/x509.js';
export type { X509Identity } from './auth/x509-identity.js';
export { type CappedBodyFailure, readCappedBody } from './capped-body.js';
export { WmpSession } from './client-session.js';
export type {
  CapabilityUpdate,
  OpenSessionOptions,
  RestoredSessionState,
  SessionBindingInfo,
  SessionErrorEvent,
  SessionEvents,
} from './client-session-types.js';
export type { Connection, SessionBinding, WmpContext } from './context.js';
export {
  DELEGATED_ACTIONS,
  type DelegationAction,
  type DelegationFailure,
  type DelegationPresentationChecker,
  type DelegationRequest,
  type DelegationSessionBinding,
  type DelegationVerifier,
  delegationRefused,
  type VerifiedDelegation,
} from './delegation/delegation.js';
export { type DelegationVerifierOptions, delegationVerifier } from './delegation/verifier.js';
export { DocumentCache, type DocumentCacheOptions } from './documents/document-cache.js';
export {
  type DocumentFailure,
  type DocumentFetch,
  DocumentFetchError,
  type DocumentFetchOptions,
  fetchJsonObject,
} from './documents/fetch-document.js';
export {
  ConnectionClosedError,
  PassedError,
  PeerError,
  type PeerErrorCode,
  RequestTimeoutError,
  SessionError,
} from './errors.js';
export {
  type ApprovalDecision,
  type ApprovalFlowOptions,
  type ApprovalReview,
  approvalFlow,
} from './flow-types/approval.js';
export {
  type FlowRequestOptions,
  type FlowStarter,
  requestApproval,
  requestSignature,
  type SignatureResult,
} from './flow-types/initiator.js';
export {
  PROOF_TYPES,
  type ProofExpectations,
  type ProofSigner,
  payloadHash,
  proofSignerOf,
  signProof,
  type VerifiedProof,
  verifyProof,
} from './flow-types/proofs.js';
export {
  type ApprovalRequest,
  type ApprovalResult,
  approvalRequestOf,
  approvalResultOf,
  SIGN_ACTIONS,
  type SignAction,
  type SignRequest,
  signRequestOf,
} from './flow-types/requests.js';
export { type SignConsent, type SignFlowOptions, signFlow } from './flow-types/sign.js';
export {
  builtInFlowTypes,
  type FlowControl,
  FlowManager,
  type FlowManagerOptions,
  type FlowNotifier,
  type FlowRecord,
  type FlowState,
  type FlowType,
  flowError,
} from './flows.js';
export { newMessageId, newRequestId, newSecret, newSessionId, requestIdSequence } from './ids.js';
export { InMemoryTransport } from './in-memory-transport.js';
export { MemorySessionStore } from './memory-session-store.js';
export { type MlsJoin, openParams, type SessionCipher, sealParams } from './mls/cipher.js';
export { encryptionRequiredFor, isContentMethod, isEncrypted } from './mls/policy.js';
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
  type ForwardedAnswer,
  type Interceptor,
  type NotificationHandler,
  Peer,
  type PeerOptions,
  type RequestHandler,
  type RequestOptions,
} from './peer.js';
export { SESSION_EXPIRED, UNKNOWN_SESSION } from './refusal-reasons.js';
export {
  type BuiltInResolverOptions,
  builtInResolvers,
  endpointResolver,
  issuerMetadataResolver,
  vctmResolver,
} from './resolve/builtin-resolvers.js';
export { identifierDomain } from './resolve/identifier-domain.js';
export { ResponderBridge, type ResponderBridgeOptions } from './responder-bridge.js';
export {
  isRouted,
  type RoutedSessionRecord,
  type RouteOffer,
  type SessionRoute,
  type SessionRoutes,
} from './routes.js';
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
  type AuthenticatedWith,
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
export type { TimestampTokenVerifier, VerifiedTimestampToken } from './timestamp-tokens.js';
export { tokenHash } from './tokens.js';
export type { CloseReason, Transport, TransportMessageExtra, TransportSendOptions } from './transport.js';
