import type { KeyResolver, X5cChainVerifier } from '@wmp/jcs-signing';
import type { Capabilities, JsonRpcNotification, MethodRegistry, ParamsOf, WmpError } from '@wmp/jsonrpc-envelope';
import type { AssertionChecker, VerifiedAssertion } from './assertions/checker.js';
import type { Authenticator } from './auth/authenticator.js';
import type { ResponderIdentity } from './auth/responder.js';
import type { Connection, WmpContext } from './context.js';
import type { DelegationVerifier } from './delegation/delegation.js';
import type { FlowManager } from './flows.js';
import type { SessionCipher } from './mls/cipher.js';
import type { SecurityPolicy } from './negotiate.js';
import type { SessionRoutes } from './routes.js';
import type { SessionRecord } from './session-model.js';
import type { SessionStore } from './session-store.js';
import type { TimestampTokenVerifier } from './timestamp-tokens.js';

/** Resolves one `wmp.resolve` type (core §5.8); `null` when the URI is unknown. */
export type Resolver = (
  uri: string,
  options: Record<string, unknown> | undefined,
  context: WmpContext,
) => Promise<ResolveOutcome | null> | ResolveOutcome | null;

export interface ResolveOutcome {
  /** What go-wmp, wmp-js and the vectors read. */
  readonly metadata?: unknown;
  /** The spec's form, sent too when known (docs/wmp-profile.md, "Resolve"). */
  readonly content_type?: string;
  readonly body?: unknown;
  readonly trust_info?: { trusted?: boolean; source?: string };
}

/**
 * The MLS side of a responder (implemented with @wmp/mls-bridge). When a session negotiates `mls`
 * or `mls-optional`, the responder creates the session's group and returns its GroupInfo
 * (`security.mls_group_info`); with the initiator's key package it also adds the initiator and
 * returns the Welcome (`mls_welcome` in the result), which is how the initiator joins. A responder
 * that is a member decrypts what it handles and encrypts its flow notifications; one without a
 * cipher for a session (a relay) forwards encrypted deliveries unread.
 */
export interface MlsSessionProvider {
  /**
   * Creates the group of a session with this responder as its member. With `keyPackage`, adds it
   * in one commit applied at once (the responder orders its own group's commits) and returns the
   * Welcome. Must refuse (-31004) a key package whose identity is not `initiator`.
   */
  createGroup(input: {
    sessionId: string;
    cipherSuite: number;
    /** The identity the initiator claims (`wmp.sender` of create); it authenticates afterwards. */
    initiator?: string | undefined;
    keyPackage?: string | undefined;
  }): Promise<{ groupInfo: string; welcome?: string | undefined }>;
  /** This responder's member of a session's group; undefined: it only relays that session's ciphertext. */
  cipherOf?(sessionId: string): SessionCipher | undefined | Promise<SessionCipher | undefined>;
  /** The session was closed or expired: forget its group. */
  deleteGroup?(sessionId: string): void | Promise<void>;
}

/** Application hooks for what a plain responder cannot decide itself (a relay fills these in). */
export interface ServerHooks {
  /** A `wmp.message.deliver` on a session; returns the result for a request form. */
  deliver?(params: ParamsOf<'wmp.message.deliver'>, context: WmpContext): unknown;
  ack?(params: ParamsOf<'wmp.message.ack'>, context: WmpContext): void | Promise<void>;
  poll?(params: ParamsOf<'wmp.message.poll'>, context: WmpContext): unknown;
  /** After a resume: re-deliver what the identity missed after `lastReceivedId`; returns how many. */
  resume?(
    session: SessionRecord,
    identity: string | undefined,
    lastReceivedId: string | undefined,
    connection: Connection,
  ): Promise<number> | number;
  /**
   * A session was carried onto a new connection by `WmpServer.adopt` (its HTTP session began on
   * another node): e.g. route to it again, as after a resume (a relay).
   */
  adopted?(session: SessionRecord, identity: string | undefined, connection: Connection): void | Promise<void>;
  /**
   * An identity authenticated on a session (`wmp.session.authenticate`, or inline at create) and
   * the session is bound to `connection` for it, with the identity assertions it presented,
   * verified (when the server checks assertions): e.g. route the session's traffic to that
   * connection from now on (a relay, for a group session's creator that never registers).
   */
  authenticated?(
    session: SessionRecord,
    identity: string,
    connection: Connection,
    assertions: readonly VerifiedAssertion[],
  ): void;
  /** After a successful `wmp.session.join`: e.g. hand the joiner what was queued for it (a relay). */
  joined?(session: SessionRecord, identity: string, connection: Connection): void | Promise<void>;
  /** A session was closed or expired. */
  sessionEnded?(session: SessionRecord): void;
  /**
   * A participant other than the creator closed its part of a group session (`wmp.session.close`):
   * the session goes on for the others; its bindings on this connection are gone.
   */
  partLeft?(session: SessionRecord, identity: string | undefined, connection: Connection): void;
  /**
   * A handler threw something that is no `WmpError` (its answer was -32603 with no details): the
   * place to log its kind (never its message, which may hold data).
   */
  handlerFailed?(method: string, error: unknown): void;
  /** A connection is gone (after its Peer closed): what was kept per connection can go. */
  connectionClosed?(connection: Connection): void;
  /** A request was answered with an error (a refused authentication, a limit): the place to log it. */
  requestRefused?(method: string, error: WmpError, connection: Connection): void;
  /**
   * A notification was refused (it cannot be answered, JSON-RPC): the place to count, log and, for
   * a deliver, tell its sender `dropped`. `session` is the session it named, when one was bound.
   */
  notificationRefused?(
    method: string,
    error: WmpError,
    connection: Connection,
    session: SessionRecord | undefined,
    message: JsonRpcNotification,
  ): void;
}

export interface WmpServerOptions {
  readonly supportedVersions?: readonly string[];
  /** What this responder supports, with its limits (the intersection with each offer is used). */
  readonly capabilities?: Capabilities;
  /**
   * Capabilities every session may exercise without having negotiated them: a relay grants
   * `relay`, since delivering to identities outside the session is what it is for (a client that
   * offered none, as go-wmp's CLI, still delivers). They still count for `encrypted_capabilities`.
   */
  readonly grantedCapabilities?: readonly string[];
  /**
   * The methods this responder knows to start from (default the WMP core table, `coreMethods`);
   * the server copies it, and `WmpServer.method` adds to its own copy.
   */
  readonly methods?: MethodRegistry;
  readonly security?: SecurityPolicy;
  /** Authenticators by auth type; default: signed_challenge (did:key, did:jwk). */
  readonly authenticators?: Readonly<Record<string, Authenticator>>;
  /**
   * Identity assertions (core §5.6): verified on `wmp.session.authenticate` (with `required`, a
   * session is authenticated only with an acceptable one) and on every message that carries
   * `wmp.identity_assertions`; refusals are -31012. `sdJwtAssertionChecker` of
   * `@wmp/session/sd-jwt` makes one. Without it, assertions are not looked at.
   */
  readonly identityAssertions?: AssertionChecker;
  /** Refuse everything but authentication until a session authenticated (default true). */
  readonly requireAuthentication?: boolean;
  readonly defaultTtlSeconds?: number;
  readonly maxTtlSeconds?: number;
  readonly challengeTtlSeconds?: number;
  readonly skewSeconds?: number;
  readonly store?: SessionStore;
  readonly flows?: FlowManager;
  readonly resolvers?: Readonly<Record<string, Resolver>>;
  /** Require a valid non-repudiation signature on every message, or on these methods (-31010). */
  readonly requireSignatures?: boolean | readonly string[];
  readonly keyResolver?: KeyResolver;
  /**
   * Checks the certificate chains of signatures made with an `x5c` header (X.509 signers), for
   * `requireSignatures`: `x5cSignatureVerifier({ trustAnchors })` of `@wmp/session/x509`.
   */
  readonly signatureChains?: X5cChainVerifier;
  /**
   * The trusted TSAs (core §5.5, §8.5.2): with it, a message in a session carrying
   * `wmp.timestamp_token` has the token verified (a bad one is -31011 with `data.reason`) and
   * its time used instead of the self-asserted `wmp.timestamp` for the skew rule.
   * `timestampVerifier({ anchors })` of `@wmp/session/timestamp` makes one from TSA anchors.
   * Without it tokens are not read and `wmp.timestamp` is checked as always.
   */
  readonly timestampTokens?: TimestampTokenVerifier;
  /**
   * This responder's own identity, to authenticate itself when the initiator sends a `nonce`: an
   * Ed25519 DID signer (`signed_challenge`) or an X.509 identity from `x509Identity` (`x5c`).
   */
  readonly identity?: ResponderIdentity;
  readonly maxSessionsPerConnection?: number;
  /** Open connections of every binding (default 100 000); more are refused, closed as `overloaded`. */
  readonly maxConnections?: number;
  /**
   * Connections with no authenticated session among them (default 1 000): their own, smaller cap,
   * so that connections that never log in cannot take every slot (docs/architecture.md, "Bounds").
   */
  readonly maxUnauthenticatedConnections?: number;
  /**
   * A connection with no authenticated session is closed after this long (default 30 s;
   * docs/architecture.md, "Bounds").
   */
  readonly unauthenticatedTimeoutMs?: number;
  /** An unauthenticated session lives this long, then gets its negotiated lifetime (default 60 s). */
  readonly pendingTtlSeconds?: number;
  /**
   * Called before `wmp.session.create`, `resume` and `join` (which run without a session, so
   * `authorize` never sees them), before anything is stored: throw -31007 to refuse (a relay
   * rate-limits them per connection and per source address here).
   */
  readonly admitSessionless?: (method: string, context: WmpContext) => void | Promise<void>;
  /**
   * Identities that may send a message whose `wmp.sender` is someone else (a peer relay forwarding
   * its users' messages, docs/federation-profile.md, "Sender binding across hops"): for them the
   * sender check is left to the handler, which must bind the claimed sender itself. Default:
   * nobody.
   */
  readonly forwardsFor?: (identity: string, method: string) => boolean;
  /**
   * Delegation (core §3.3): `delegationVerifier(...)` lets a connection authenticated as a
   * delegate send for a principal with a `wmp.sender_delegate` that proves it (-31015 when it does
   * not; handlers find it in `context.delegation`); `false` refuses every message that asks for
   * delegation with -31005. Default: no delegation (the claimed sender must be the authenticated
   * one, -31002).
   */
  readonly delegation?: DelegationVerifier | false;
  /** Extra policy after the session checks: false is -31002 (the interop vectors' `authorize`). */
  readonly authorize?: (context: WmpContext) => boolean | Promise<boolean>;
  /**
   * Checks each identity `wmp.session.create` lists in `participants`, before anything is stored:
   * a returned problem is -32602 naming the entry (a relay refuses malformed identifiers, as it
   * does the recipients of a deliver: `identifierProblem`). Default: none.
   */
  readonly participantProblem?: (identifier: string) => string | undefined;
  /** Extra params validation after the schema: a returned reason is -32602. */
  readonly validate?: (method: string, params: unknown) => string | undefined;
  /**
   * The typed answer to a handler's unexpected exception, when there is one (the relay answers a
   * store that is down with a retryable -31007); undefined: -32603, no details.
   */
  readonly refusalOf?: (error: unknown) => WmpError | undefined;
  readonly hooks?: ServerHooks;
  readonly mls?: MlsSessionProvider;
  /** Sessions this responder routes between two others rather than answers (a relay). */
  readonly routes?: SessionRoutes;

  readonly now?: () => number;
  readonly requestTimeoutMs?: number;
  readonly maxMessageBytes?: number;
}

/** What handlers use of the server. */
export interface ServerServices {
  readonly options: WmpServerOptions;
  readonly store: SessionStore;
  readonly flows: FlowManager;
  readonly authenticators: ReadonlyMap<string, Authenticator>;
  readonly supportedCapabilities: Capabilities;
  readonly now: () => number;
  notifySession(sessionId: string, method: string, params: Record<string, unknown>): Promise<void>;
  /**
   * What the responder sends on a session, encrypted when the security mode requires it of this
   * method; undefined when it requires it and this responder holds no cipher (nothing is sent).
   */
  seal(
    session: SessionRecord,
    method: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined>;
  /** A session was closed or expired: its flows, bindings, hook and MLS group are done with. */
  ended(session: SessionRecord): void;
  /** Throws -31007 when binding another session to `connection` would pass its cap. Call before storing. */
  checkBind(connection: Connection, sessionId: string): void;
  bind(connection: Connection, sessionId: string, identity: string | undefined): void;
  unbind(sessionId: string): void;
  /** Unbinds one session from one connection only (a participant's own close). */
  unbindConnection(connection: Connection, sessionId: string): void;
  /**
   * `identity` resumed `sessionId` on `current`: another connection that is that session for the
   * same identity (the HTTP session the client used before) is stale, and ends.
   */
  supersede(sessionId: string, identity: string | undefined, current: Connection): void;
}
