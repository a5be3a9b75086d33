import type { KeyResolver } from '@wmp/jcs-signing';
import type { TrustAnchors } from '@wmp/session';

/** Non-repudiation signatures (core §5.4): when the client signs, and how it checks others'. */
export interface SignatureOptions {
  /**
   * Sign every message sent. Default: only on sessions that negotiated `non_repudiation` or
   * `evidence`, and what is sent with `sign: true`.
   */
  readonly always?: boolean;
  /**
   * The anchors senders' X.509 certificates must chain to: a signature with an `x5c` header
   * verifies only against them (without: `valid: false`, `untrusted_chain`).
   */
  readonly trustAnchors?: TrustAnchors;
  /** Ed25519 keys of other DID methods (did:web...); did:key and did:jwk are known. */
  readonly resolver?: KeyResolver;
}

/** RFC 3161 trusted timestamps (core §5.5). */
export interface TimestampOptions {
  /** The TSA (HTTP, `application/timestamp-query`): messages sent get a token from it. */
  readonly url?: string | URL;
  /** The anchors the TSA's certificate chains to: tokens obtained and received are verified against them. */
  readonly anchors: TrustAnchors;
  /** Per TSA request; default 10 s. */
  readonly timeoutMs?: number;
}

/** What this client asks for one message. */
export interface ProofRequest {
  /** Sign it even where the session does not require it. */
  readonly sign?: boolean;
  /** A token from this TSA, the client's (`true`), or none (`false`); default the client's `timestamp`, if it has a `url`. */
  readonly timestamp?: TimestampOptions | boolean;
}

/** A message's non-repudiation signature, as checked on receipt. */
export interface SignatureCheck {
  /** Who the signature names: the identifier of its `kid` (a DID, or an `x509:` id its certificate must prove). */
  readonly signer: string | undefined;
  /** It verified over this content with a key of `signer`, and `signer` is the sender. */
  readonly valid: boolean;
  /** -31010 `data.reason` when it did not: `signature`, `signer_mismatch`, `untrusted_chain`, `unknown_key`, `header`, `malformed`. */
  readonly reason?: string;
  /** The rule that refused a certificate chain (`untrusted_chain`), e.g. `expired`, `no_trust_anchors`. */
  readonly detail?: string;
  /** `EdDSA` or `ES256`, when it verified. */
  readonly alg?: string;
}

/** One `wmp.relay_chain` entry. */
export interface RelayHopInfo {
  readonly relay: string | undefined;
  readonly relayId: string | undefined;
  readonly timestamp: string | undefined;
  /** It carries a signature (a relay may leave it out when evidence is not active, core §5.7). */
  readonly signed: boolean;
}

/** A message's relay chain (core §5.7), as checked on receipt. */
export interface RelayChainCheck {
  readonly hops: readonly RelayHopInfo[];
  /**
   * Every signed hop verified (signed by its `relay_id`, over this content and the hops before),
   * and the last hop is the relay this client proved, when it did.
   */
  readonly valid: boolean;
  readonly reason?: string;
  /** The index of the hop that failed. */
  readonly hop?: number;
}

/** A message's RFC 3161 timestamp token (core §5.5), as checked on receipt. */
export interface TimestampCheck {
  /** The TSA's time, when the token verified. */
  readonly time: Date | undefined;
  readonly valid: boolean;
  /** -31011 `data.reason` (`token_*`), or `no_anchors` when the client has no TSA anchors to check it with. */
  readonly reason?: string;
  readonly detail?: string;
  /** The lowercase hex SHA-256 of the TSA's certificate, when it verified. */
  readonly tsa?: string;
}

/** What the checks of a received message found; undefined parts were not there. */
export interface MessageProofs {
  readonly signature: SignatureCheck | undefined;
  readonly relayChain: RelayChainCheck | undefined;
  readonly timestamp: TimestampCheck | undefined;
}

/**
 * An evidence record (wmp-tables §9) as the client got it, in a `wmp.evidence.notify` or read
 * from the repository with `evidence()`: its main fields, what its checks found, and the record,
 * JWS and token themselves (what to keep as proof: `verifyEvidence(record, signedEvidence)`).
 */
export interface ReceivedEvidence {
  /** `evidence_id`. */
  readonly id: string | undefined;
  /** `event_type`: `submission_accepted`, `delivery_confirmed`, `retrieval_confirmed`, ... */
  readonly eventType: string | undefined;
  /** The message it is about (`original_message_id`), its sender and the recipient it names. */
  readonly messageId: string | undefined;
  readonly sender: string | undefined;
  readonly recipient: string | undefined;
  /** `evidence_issuer.id`: the relay that witnessed the event and signed the record. */
  readonly issuer: string | undefined;
  /** `event_time` (RFC 3339). */
  readonly time: string | undefined;
  /** The JWS over JCS(record), checked against `issuer`; `reason` is the -31010 `data.reason`. */
  readonly signature: { readonly valid: boolean; readonly reason?: string };
  /** Its RFC 3161 token over JCS(record), against the client's TSA anchors; undefined when it has none. */
  readonly timestamp: TimestampCheck | undefined;
  readonly record: Readonly<Record<string, unknown>>;
  readonly signedEvidence: string | undefined;
  readonly timestampToken: string | undefined;
}
