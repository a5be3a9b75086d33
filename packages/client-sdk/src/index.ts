// Browser-safe entry: nothing here imports Node built-ins (a test bundles it for the browser).
// Node-only parts (the file store) are in `@wmp/client-sdk/node`.
// The errors a WmpClient call rejects with, besides WmpClientError and the WmpError family.
export { ConnectionClosedError, RequestTimeoutError } from '@wmp/session';
export { ReconnectFailedError } from '@wmp/transports';
export type { ApprovalRequestOptions, FlowConsent, SignatureRequestOptions } from './client/built-in-flows.js';
export { WmpClient } from './client/client.js';
export type {
  AcceptOptions,
  AssuranceLevel,
  ConsignmentMode,
  ConsignmentNotice,
  DelegateAuthorization,
  OnBehalfOf,
  RegisteredSendOptions,
} from './client/consignment.js';
export type { Listener } from './client/emitter.js';
export { type Binding, type Endpoint, WELL_KNOWN_PATH } from './client/endpoint.js';
export { WmpClientError, type WmpClientErrorCode } from './client/errors.js';
export type { EvidencePage, EvidenceQuery } from './client/evidence-reads.js';
export { isConnectionLost } from './client/failures.js';
export type { FlowActionResult, FlowHandle } from './client/flows.js';
export type { GroupSessionLayer } from './client/group-session.js';
export { type GroupSendOptions, GroupSession } from './client/group-session.js';
export { type MailboxFallbackOptions, mailboxFallback } from './client/mailbox-fallback.js';
export { DEFAULT_CLIENT_CAPABILITIES } from './client/options.js';
export { IncomingSession } from './client/peer-sessions/incoming-session.js';
export { PeerSession } from './client/peer-sessions/peer-session.js';
export { DEFAULT_SERVED_CAPABILITIES } from './client/peer-sessions/session-responder.js';
export type {
  OpenPeerSessionOptions,
  PeerMessage,
  PeerResolver,
  PeerSendOptions,
  PeerSessionEvents,
  ServeSessionsOptions,
} from './client/peer-sessions/types.js';
export type {
  MessageProofs,
  ProofRequest,
  ReceivedEvidence,
  RelayChainCheck,
  RelayHopInfo,
  SignatureCheck,
  SignatureOptions,
  TimestampCheck,
  TimestampOptions,
} from './client/proofs/types.js';
export type { StartFlowOptions } from './client/session-calls.js';
export type {
  ClientCallOptions,
  ClientEvents,
  ClientIdentity,
  ClientSendOptions,
  ClientSendResult,
  ConnectionState,
  ExpectedRelay,
  FlowEvent,
  MessageFallback,
  MessageStatusEvent,
  NotificationEvent,
  ReceivedMessage,
  StateChange,
  UndeliveredMessage,
  WmpClientOptions,
} from './client/types.js';
export { ClientSdkError } from './errors.js';
export { GroupError, type GroupErrorCode } from './group/errors.js';
export { Group } from './group/group.js';
export { GROUP_STORE_PREFIX, KEY_PACKAGES_STORE_KEY } from './group/record.js';
export type {
  GroupCommitResult,
  GroupCreateOptions,
  GroupErrorEvent,
  GroupEvents,
  GroupIdentity,
  GroupJoinOptions,
  GroupMessageOptions,
  GroupOptions,
  GroupSendResult,
  KeyPackageOptions,
} from './group/types.js';
export { IdentityError, type IdentityErrorCode } from './identity/errors.js';
export { type Card, IDENTITY_STORE_KEY, Identity, type IdentityJson, type X509Pem } from './identity/identity.js';
export type { BoxLimitsInfo } from './mailbox/box-limits.js';
export { MailboxError, type MailboxErrorCode, type MailboxErrorDetails } from './mailbox/errors.js';
export type { MailMessage, RejectedEvent, RejectReason } from './mailbox/examine.js';
export {
  type AllowList,
  CARD_STORE_KEY,
  type CallOptions,
  DEFAULT_MAX_STAMP_BITS,
  type FetchOptions,
  type FetchResult,
  Mailbox,
  type MailboxOptions,
} from './mailbox/mailbox.js';
export type { AllowOutcome, CardOutcome, PublishOutcome } from './mailbox/outcomes.js';
export { RELAY_STATE_PREFIX } from './mailbox/relay-state.js';
export { SEEN_STORE_KEY } from './mailbox/seen-set.js';
export type { Recipient, SendOptions, SendResult } from './mailbox/send.js';
export type { MailboxWatch, WatchOptions } from './mailbox/watch.js';
export { ClientStoreError, type ClientStoreErrorCode } from './store/errors.js';
export { IndexedDbStore } from './store/indexeddb-store.js';
export { MemoryClientStore } from './store/memory-store.js';
export { type ClientStore, MAX_STORE_KEY_LENGTH } from './store/store.js';
export { type TlsFailure, type TlsFailureKind, tlsFailureOf } from './tls/failure.js';
export type { TlsOptions } from './tls/options.js';
