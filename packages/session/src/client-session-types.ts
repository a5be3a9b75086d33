// The initiator session's options, state and events: the shapes `WmpSession` takes and emits.
import type { Signer } from '@wmp/jcs-signing';
import type { Auth, Capabilities, Security, WmpError } from '@wmp/jsonrpc-envelope';
import type { ExpectedResponder } from './auth/responder.js';
import type { X509Identity } from './auth/x509-identity.js';
import type { MlsJoin, SessionCipher } from './mls/cipher.js';
import type { RequestOptions } from './peer.js';

export interface OpenSessionOptions {
  /** Our identity (`wmp.sender`). Defaults to the X.509 identity's id, else the signer's `did`. */
  readonly sender?: string;
  /** Signs the challenge when the responder asks for authentication. */
  readonly signer?: Signer;
  /** Authenticate with `x5c` (a certificate chain and its key, from `x509Identity`) instead. */
  readonly x509?: X509Identity;
  /**
   * Mutual authentication (core §4.4.5): send a fresh nonce and refuse the session unless the
   * responder's `auth` proves this responder (-31002 `responder_auth_failed`, nothing else sent).
   */
  readonly verifyResponder?: ExpectedResponder;
  /**
   * A create naming one other participant, sent through a relay (transport §6.2), is answered by
   * that participant (verified as `verifyResponder`) or, when it cannot be reached, by the relay,
   * which hosts the session and says so (`wmp.relay_hosted`): the responder to verify then
   * (`false`: none; default `verifyResponder`, which a relay cannot pass).
   */
  readonly verifyHostedBy?: ExpectedResponder | false;
  /** Inline credentials (e.g. `{ type: 'bearer', token }`). */
  readonly auth?: Auth;
  readonly participants?: readonly string[];
  readonly capabilities?: Capabilities;
  readonly security?: Security;
  readonly ttl?: number;
  readonly version?: string;
  readonly requestOptions?: RequestOptions;
  /**
   * Join the group the responder creates for an `mls` / `mls-optional` session: our key package
   * goes with create, the Welcome comes back and `join` turns it into the session's cipher.
   */
  readonly mls?: MlsJoin;
  /** A group we already share with the other members (e.g. made through a relay): the session's cipher. */
  readonly cipher?: SessionCipher;
  /**
   * Identity assertions (core §5.6) for `wmp.session.authenticate`: made for this session (its id
   * and challenge are the audience and nonce of a presentation), e.g. with `sdJwtAssertion` of
   * `@wmp/session/sd-jwt`.
   */
  readonly identityAssertions?: (session: SessionBindingInfo) => Promise<readonly unknown[]> | readonly unknown[];
}

/** What a presentation is bound to (core §5.6): the session's id and its challenge. */
export interface SessionBindingInfo {
  readonly sessionId: string;
  readonly challenge: string;
}

/** What `updateCapabilities` changes (core §4.2.4). */
export interface CapabilityUpdate {
  readonly add?: Capabilities;
  readonly remove?: readonly string[];
  readonly security?: Security;
  /** With an upgrade to MLS: join the group the responder creates, as at open. */
  readonly mls?: MlsJoin;
}

/** An incoming message refused on our side (its request, if it was one, was answered with `error`). */
export interface SessionErrorEvent {
  readonly method: string;
  readonly error: WmpError;
}

/** What `WmpSession.restore` needs: the public state of a session saved earlier or just joined. */
export interface RestoredSessionState {
  readonly id: string;
  readonly version: string;
  readonly sender: string | undefined;
  readonly capabilities?: Capabilities | undefined;
  readonly security?: Security | undefined;
  readonly resumptionToken: string | undefined;
  readonly lastReceivedId?: string | undefined;
  /** Who the responder proved to be when the session was opened (kept across restarts). */
  readonly responder?: string | undefined;
}

/** A listener of one session event. */
export type Listener<T> = (params: T) => void;

/** What a session tells its user. */
export interface SessionEvents {
  /** A `wmp.message.deliver` to us. */
  message: Record<string, unknown>;
  /** A `wmp.message.status` about something we sent. */
  status: Record<string, unknown>;
  /** Any other notification on this session (flow updates included). */
  notification: { method: string; params: Record<string, unknown> };
  /**
   * An incoming message we refused: it does not decrypt (-31004), its MLS sender is not its
   * `wmp.sender` (-31004), or it came in the clear where the security mode wants it encrypted
   * (-31003). The session stays usable.
   */
  error: SessionErrorEvent;
}
