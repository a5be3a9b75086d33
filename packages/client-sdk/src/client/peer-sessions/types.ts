import type { Capabilities } from '@wmp/jsonrpc-envelope';
import type {
  AssertionChecker,
  Authenticator,
  DocumentFetch,
  FlowType,
  IdentityPresenter,
  ResolveOutcome,
  WmpContext,
} from '@wmp/session';
import type { FlowConsent } from '../built-in-flows.js';
import type { MessageProofs, ProofRequest } from '../proofs/types.js';
import type { ClientCallOptions } from '../types.js';

/**
 * A `wmp.message.deliver` on an end-to-end session, handed over once per message id, with what
 * its signature, relay chain and timestamp token say (undefined: it carried none).
 */
export interface PeerMessage extends MessageProofs {
  /** The relay's message id (what is acknowledged and deduplicated). */
  readonly id: string | undefined;
  /** The sender, as the relay bound it. */
  readonly from: string | undefined;
  readonly contentType: string | undefined;
  readonly body: unknown;
  readonly params: Readonly<Record<string, unknown>>;
}

/** What an end-to-end session tells its user. */
export interface PeerSessionEvents {
  message: PeerMessage;
  /** Any other notification the other party sent on the session (flow updates included). */
  notification: { readonly method: string; readonly params: Readonly<Record<string, unknown>> };
  /** The session ended (either side closed it). */
  closed: { readonly by: 'us' | 'peer' };
}

export interface OpenPeerSessionOptions extends ClientCallOptions {
  /** Offered to the other party; default `{messaging, flows, resolve}`. */
  readonly capabilities?: Capabilities;
  /** Requested lifetime in seconds (the other party may shorten it). */
  readonly ttl?: number;
  /**
   * When the relay hosts the session instead (the other party is offline, or answers no creates):
   * `allow` (default) resolves with `relayHosted: true` (deliveries are queued for the other party;
   * flows and resolve go to the relay); `refuse` rejects with `ERR_CLIENT_PEER_UNREACHABLE`.
   */
  readonly whenHosted?: 'allow' | 'refuse';
  /**
   * Identity assertions (core §5.6) presented to the other party when the session is opened
   * (`sdJwtPresenter` of `@wmp/session/sd-jwt`); a -31012 is answered as the presenter allows.
   */
  readonly present?: IdentityPresenter;
}

/** How one message on an end-to-end session is sent. */
export interface PeerSendOptions extends ClientCallOptions, ProofRequest {
  /** Default `application/json`. */
  readonly contentType?: string;
}

/** A resolver of one `wmp.resolve` type, as the session engine takes it. */
export type PeerResolver = (
  uri: string,
  options: Record<string, unknown> | undefined,
  context: WmpContext,
) => Promise<ResolveOutcome | null> | ResolveOutcome | null;

/** What this client offers to the sessions others open to it (the model of `WmpServer`). */
export interface ServeSessionsOptions {
  /** What it supports, with its limits; default `{messaging, flows, resolve}`. */
  readonly capabilities?: Capabilities;
  /** Flow types it runs (core §6): their steps, actions and completion. */
  readonly flows?: Readonly<Record<string, FlowType>>;
  /** Resolvers by `wmp.resolve` type (core §5.8). */
  readonly resolvers?: Readonly<Record<string, PeerResolver>>;
  /** How initiators authenticate; default a signed challenge (did:key, did:jwk). */
  readonly authenticators?: Readonly<Record<string, Authenticator>>;
  /** Whether an initiator may open a session with us; default everyone who authenticates. */
  readonly accept?: (initiator: string) => boolean | Promise<boolean>;
  /** Sessions answered at once; default 64. */
  readonly maxSessions?: number;
  /**
   * The identity assertions initiators must present (core §5.6), e.g. `sdJwtAssertionChecker` of
   * `@wmp/session/sd-jwt`: checked when they authenticate and on their messages (-31012); what
   * verified is `IncomingSession.assertions`.
   */
  readonly identityAssertions?: AssertionChecker;
  /**
   * The built-in `approval` and `sign` flows, answered by this application's consent callbacks
   * (a signature is made with the client's key). Without a callback the flow type is not offered.
   */
  readonly consent?: FlowConsent;
  /**
   * For the built-in resolvers (`endpoint` of other domains, `issuer_metadata`, `vctm`): without
   * it only `endpoint` for this client itself is answered. Ignored when `resolvers` is given.
   */
  readonly fetch?: DocumentFetch;
}
