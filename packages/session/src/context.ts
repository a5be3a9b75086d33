import type { VerifiedAssertion } from './assertions/checker.js';
import type { VerifiedDelegation } from './delegation/delegation.js';
import type { BaseContext, Peer } from './peer.js';
import type { SessionRecord } from './session-model.js';

/** A session bound to a connection. */
export interface SessionBinding {
  /** The identity authenticated for the session on this connection (undefined while pending). */
  readonly identity: string | undefined;
  /**
   * Recent request ids on the session, to refuse duplicates: made by the first request, kept when
   * the binding is replaced (authenticated after pending), gone with the binding.
   */
  readonly recentIds?: Set<string | number>;
}

/** One connection a server holds, and the sessions bound to it. */
export interface Connection {
  readonly id: number;
  readonly peer: Peer<WmpContext>;
  /** Session id -> its binding on this connection. */
  readonly sessions: Map<string, SessionBinding>;
  /** Whether an authenticated session is bound to it (else it counts against the unauthenticated cap). */
  authenticated: boolean;
  /** Closes it if it has not authenticated in time (the server's to arm and clear). */
  loginTimer: ReturnType<typeof setTimeout> | undefined;
  /** Sessions whose close is being written: already gone for this connection (made by the first close). */
  closing?: Set<string>;
  /** The binding's peer address, a key for per-source limits only: never logged. */
  readonly remoteAddress?: string;
  /** The TLS client certificate chain of the binding (DER, leaf first), for `mtls`. */
  readonly peerCertificates?: readonly Uint8Array[];
  /**
   * The identity a binding proved for this connection without a handshake here (`WmpServer.adopt`):
   * a session it joined elsewhere is carried onto this connection when a message names it.
   */
  adopted?: string;
}

/** What a WMP handler gets: the base context plus the session, the sender and the connection. */
export interface WmpContext extends BaseContext {
  /** The session the message belongs to (undefined for create and resume). */
  readonly session: SessionRecord | undefined;
  /** The authenticated identity of this connection for that session, if any. */
  readonly sender: string | undefined;
  readonly connection: Connection;
  /** The message arrived MLS-encrypted (its params, as the handler gets them, are decrypted when we could). */
  readonly encrypted?: boolean;
  /** Its `wmp.identity_assertions`, verified (core §5.6), when the server checks assertions. */
  readonly assertions?: readonly VerifiedAssertion[];
  /**
   * The connection's identity (`sender`) acts for `delegation.principal` (core §3.3): the message's
   * `wmp.sender_delegate` was verified for this method's action.
   */
  readonly delegation?: VerifiedDelegation;
}
