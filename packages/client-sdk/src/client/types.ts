import type { Signer } from '@wmp/jcs-signing';
import type { Capabilities, JsonRpcNotification, WmpError } from '@wmp/jsonrpc-envelope';
import type { IdentityPresenter, TrustAnchors, X509Identity } from '@wmp/session';
import type { FetchLike, ReconnectPolicyOptions, WebSocketConstructorLike } from '@wmp/transports';
import type { ClientStore } from '../store/store.js';
import type { TlsOptions } from '../tls/options.js';
import type { ConsignmentNotice, RegisteredSendOptions } from './consignment.js';
import type {
  MessageProofs,
  ProofRequest,
  ReceivedEvidence,
  SignatureOptions,
  TimestampOptions,
} from './proofs/types.js';

/** Who the client is: `Identity` fits; only the DID, the signing key and an X.509 identity are used here. */
export interface ClientIdentity {
  readonly did: string;
  readonly keypair: Signer;
  /**
   * An X.509 identity (`x509Identity` of `@wmp/session/x509`, or `Identity.fromX509`): the client
   * is then known to the relay as its `x509:*` id and authenticates by `x5c`.
   */
  readonly x509?: X509Identity | undefined;
}

/**
 * Who the relay must prove to be (core §4.4.5): its `relay_id` (a did:key), or, for a relay with
 * an X.509 identity, the trust anchors its certificate chains to (and the id, if pinned).
 */
export interface ExpectedRelay {
  readonly id?: string;
  readonly trustAnchors?: TrustAnchors;
}

/** `connecting` (first connection) -> `connected` <-> `reconnecting` -> `closed`. */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'closed';

export interface StateChange {
  readonly state: ConnectionState;
  readonly previous: ConnectionState;
  /** While reconnecting: the attempt about to be made (1-based) and the wait before it. */
  readonly attempt?: number;
  readonly delayMs?: number;
  /** Why the connection dropped, why an attempt failed, or why the client gave up. */
  readonly error?: unknown;
}

/**
 * A `wmp.message.deliver` handed to the application (once per message id), with what its
 * non-repudiation signature (`signature`), relay chain (`relayChain`) and timestamp token
 * (`timestamp`) say: each is undefined when the message carried none, and a failed check never
 * drops the message.
 */
export interface ReceivedMessage extends MessageProofs {
  /** `relay`: live or replayed by the relay; `mailbox`: handed over with `receiveMail`. */
  readonly via: 'relay' | 'mailbox';
  /** The relay's message id (`wmp.message_id`): what is acknowledged and deduplicated. */
  readonly id: string | undefined;
  /** The sender's own id of the message (`wmp.client_message_id`), the same on every retry. */
  readonly clientMessageId: string | undefined;
  /** The authenticated sender (`wmp.sender`, set by the relay). */
  readonly from: string | undefined;
  readonly to: readonly string[] | undefined;
  /** The session it arrived on (undefined for a message that came another way, e.g. a mailbox). */
  readonly sessionId: string | undefined;
  /** The group session, when it arrived on one. */
  readonly group: string | undefined;
  readonly contentType: string | undefined;
  readonly body: unknown;
  /** Everything the deliver carried (`wmp.relay_chain`, `reply_to`, ...). */
  readonly params: Readonly<Record<string, unknown>>;
}

/** A `wmp.message.status` about a message this client sent. */
export interface MessageStatusEvent {
  readonly messageId: string;
  readonly status: 'queued' | 'delivered' | 'expired' | 'dropped';
  readonly recipient: string | undefined;
  readonly queuedUntil: string | undefined;
  readonly reason: string | undefined;
}

/** Something that happened to a flow on one of the client's sessions (its own or another's). */
export interface FlowEvent {
  readonly sessionId: string;
  readonly flowId: string;
  readonly kind: 'progress' | 'completed' | 'failed';
  readonly step?: string;
  readonly payload?: Readonly<Record<string, unknown>>;
  readonly result?: Readonly<Record<string, unknown>>;
  readonly error?: WmpError;
}

/** A notification the client does not interpret itself. */
export interface NotificationEvent {
  readonly sessionId: string;
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/** What `on(event, listener)` can listen to. */
export interface ClientEvents {
  message: ReceivedMessage;
  status: MessageStatusEvent;
  flow: FlowEvent;
  state: StateChange;
  notification: NotificationEvent;
  /** A consented message waits at the relay for this client to `accept` or `reject` it (core §3.5). */
  notice: ConsignmentNotice;
  /**
   * A `wmp.evidence.notify` (wmp-tables §9) on a session that negotiated `evidence`: a record the
   * relay (or a relay after it) made about a message this client sent. They wait until there is
   * a listener, are handed over once per record id and acknowledged (`wmp.evidence.ack`) after it.
   */
  evidence: ReceivedEvidence;
  /** A failure nobody awaits: a listener that threw, a store write, a fallback that failed. */
  error: Error;
}

/** A message the relay could not hand to a live connection of `to` (status `queued` or `dropped`). */
export interface UndeliveredMessage {
  readonly to: string;
  readonly status: 'queued' | 'dropped';
  readonly messageId: string;
  readonly clientMessageId: string;
  /** The group session it was sent on, if any. */
  readonly group: string | undefined;
  readonly contentType: string;
  readonly body: unknown;
  readonly queuedUntil: string | undefined;
  /**
   * The message as a stand-alone envelope for another channel (a sealed mailbox): the sender and
   * `client_message_id` in `wmp`, so a receiving `WmpClient` that gets both copies keeps one.
   */
  readonly envelope: JsonRpcNotification;
}

/**
 * Called once per recipient for a message the relay queued (no live route) or dropped, when the
 * application allowed it (`fallback` option of the client or of `send`). A rejection is reported
 * on `error`; the relay copy stays queued either way.
 */
export type MessageFallback = (message: UndeliveredMessage) => void | Promise<void>;

export interface ClientSendOptions extends ProofRequest, RegisteredSendOptions {
  /** Default `application/json`. */
  readonly contentType?: string;
  /** `wmp.expires_at`: the relay drops the message (status `expired`) after it. */
  readonly expiresAt?: Date | string;
  readonly messageType?: string;
  readonly inReplyTo?: string;
  /** The application's own id for the message; default a fresh random one. Retries keep it. */
  readonly clientMessageId?: string;
  /** Overrides the client's `fallback` for this message; `false` turns it off. */
  readonly fallback?: MessageFallback | false;
  readonly signal?: AbortSignal;
  /** Per attempt; default the client's `requestTimeoutMs`. */
  readonly timeoutMs?: number;
}

export interface ClientSendResult {
  /** The relay's id: statuses name it (undefined from a responder that assigns none). */
  readonly messageId: string | undefined;
  readonly clientMessageId: string;
  /**
   * What the relay says happened, once it is stored for every recipient: `accepted` (some
   * recipient is online: `delivered` follows as a status) or `queued` (held for later).
   */
  readonly status: 'accepted' | 'queued' | 'delivered' | 'expired' | 'dropped' | undefined;
}

export interface ClientCallOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export interface WmpClientOptions {
  readonly identity: ClientIdentity;
  /**
   * Mutual authentication: the relay must prove this identity when a session is opened, else the
   * connection is refused with `ERR_CLIENT_RELAY_AUTH`. Default: the `relay_id` of the relay's
   * well-known document when the URL was a bare origin (so it was read), else none. `false`: never.
   */
  readonly relay?: ExpectedRelay | false;
  /** Keeps the session, its resumption token, the last received id and the dedupe ids. Default: in memory. */
  readonly store?: ClientStore;
  /**
   * `auto` (default): WebSocket for `ws:`/`wss:` URLs, HTTP + SSE for `http:`/`https:` URLs with a
   * path, and for a bare origin what its `/.well-known/wmp-configuration` prefers.
   */
  readonly transport?: 'auto' | 'websocket' | 'http';
  /** Default `globalThis.WebSocket` (browsers, Node >= 22); `@wmp/client-sdk/node` passes `ws`'s. */
  readonly WebSocket?: WebSocketConstructorLike;
  /** Default the global `fetch`. */
  readonly fetch?: FetchLike;
  /** Allows `ws:`/`http:` to hosts other than loopback. Insecure: tests and trusted networks only. */
  readonly allowInsecure?: boolean;
  /**
   * A CA to trust and a client certificate for mTLS (PEM). Node only: `connect` from
   * `@wmp/client-sdk/node` applies them to its fetch and WebSocket; `WmpClient.connect` (the
   * browser-safe entry, where the platform decides TLS) refuses them with `ERR_CLIENT_TLS_OPTIONS`.
   */
  readonly tls?: TlsOptions;
  /**
   * How an X.509 identity authenticates: `x5c` (default: a signature by the certificate's key over
   * the challenge, the relay needs trust anchors), or `mtls`: by the TLS client certificate
   * itself, when the relay terminates TLS and asked for one (in Node, `tls.cert` is that
   * certificate). Ignored for an identity without X.509.
   */
  readonly x509Auth?: 'x5c' | 'mtls';
  /** Offered at session creation; default `{messaging, relay, offline, flows}`. */
  readonly capabilities?: Capabilities;
  /** Requested session lifetime in seconds; default 86 400 (the responder may shorten it). */
  readonly ttl?: number;
  /** Send `wmp.relay.register`; default: when the responder negotiated `relay`. */
  readonly register?: boolean;
  /** Backoff of reconnection (transport §3.5: 1 s doubling to 30 s, 10 attempts); `false`: never reconnect. */
  readonly reconnect?: ReconnectPolicyOptions | false;
  /** Timeout of each request; default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Requests in flight at once; default 256. */
  readonly maxPendingRequests?: number;
  /** Calls waiting for a reconnection at once; default 256. */
  readonly maxWaitingCalls?: number;
  /** Received messages waiting for the application; more stay unacknowledged at the relay. Default 1000. */
  readonly maxPendingMessages?: number;
  /** Message ids remembered (and stored) for deduplication; default 8192. */
  readonly maxSeenIds?: number;
  /** Times a `send` is retried after the connection dropped under it; default 3. */
  readonly sendRetries?: number;
  /** Flows followed at once; default 64. */
  readonly maxFlows?: number;
  /** Group sessions held at once; default 15 (the relay's 16 sessions per connection, less ours). */
  readonly maxGroups?: number;
  /** Where undelivered messages go when the application allows it (e.g. a sealed `Mailbox`). */
  readonly fallback?: MessageFallback;
  /**
   * Non-repudiation signatures (core §5.4): what this client signs (by default, everything it
   * sends on a session that negotiated `non_repudiation` or `evidence`, and `send(..., { sign: true })`),
   * and how it checks the signatures it receives (the anchors of senders' X.509 certificates).
   */
  readonly signatures?: SignatureOptions;
  /**
   * RFC 3161 timestamps (core §5.5): with a `url`, every message this client delivers gets a
   * token from that TSA (`send(..., { timestamp: false })` leaves one out); the `anchors`
   * verify the tokens obtained and received.
   */
  readonly timestamp?: TimestampOptions;
  /** How long after a send its `queued`/`dropped` status still triggers the fallback; default 10 s. */
  readonly fallbackWindowMs?: number;
  /**
   * Identity assertions (core §5.6) presented when the client opens its sessions at the relay
   * (`sdJwtPresenter` of `@wmp/session/sd-jwt`), for a relay whose policy asks for them; a
   * refusal is answered as the presenter allows.
   */
  readonly present?: IdentityPresenter;
}
