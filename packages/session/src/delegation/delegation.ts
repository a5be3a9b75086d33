// Delegation (core §3.3, wmp-tables §2.2): a connection authenticated as delegate D sends with
// `wmp.sender` = principal P only with `wmp.sender_delegate {id: D, authorization}` that proves
// it. The types every part shares: what a verified delegation is, who verifies, and the one
// error family (-31015 with `data.reason`).
import { DelegationInvalidError } from '@wmp/jsonrpc-envelope';

/** What a delegate does for its principal: send a message (`submit`), or fetch and receive one (`retrieve`). */
export type DelegationAction = 'submit' | 'retrieve';

/** Why a delegation was refused: `data.reason` of -31015 (fixed words, no internals). */
export type DelegationFailure =
  | 'malformed'
  | 'principal_required'
  | 'delegate_not_authenticated'
  | 'action_not_delegable'
  | 'unsupported_type'
  | 'unknown_key'
  | 'principal_mismatch'
  | 'delegate_mismatch'
  | 'untrusted_chain'
  | 'untrusted_issuer'
  | 'bad_signature'
  | 'invalid_proof'
  | 'not_key_bound'
  | 'out_of_scope'
  | 'expired';

export function delegationRefused(reason: DelegationFailure): InstanceType<typeof DelegationInvalidError> {
  return new DelegationInvalidError({ reason });
}

/** A delegation that held: who acts for whom, how it was proven, and until when. */
export interface VerifiedDelegation {
  readonly principal: string;
  readonly delegate: string;
  readonly type: 'mandate' | 'verifiable_presentation';
  /** The actions granted, as signed (never the unsigned copy beside the credential). */
  readonly scope: readonly string[];
  /** ms since the epoch. */
  readonly validUntil: number;
  /** Who vouched: the principal for a mandate, the credential's issuer for a presentation. */
  readonly issuer: string;
}

/**
 * The session a delegate presents a credential on: a presentation's key binding must carry its
 * challenge (`nonce`) and id (`audiences`). Undefined where the delegate's own relay already
 * checked that binding (a message a peer relay forwards).
 */
export interface DelegationSessionBinding {
  readonly nonce: string | undefined;
  readonly audiences: readonly string[];
}

export interface DelegationRequest {
  /** `wmp.sender`: the principal the message is for. */
  readonly principal: string;
  /** `wmp.sender_delegate` as it came. */
  readonly delegate: unknown;
  /** The identity that proved itself on the connection (or the one a peer relay speaks for). */
  readonly authenticated: string;
  readonly action: DelegationAction;
  readonly binding: DelegationSessionBinding | undefined;
  readonly now: number;
}

/** Checks `sender_delegate` authorizations (`delegationVerifier`); throws -31015. */
export interface DelegationVerifier {
  verify(request: DelegationRequest): Promise<VerifiedDelegation>;
}

/** What a `verifiable_presentation` authorization's credential proves (`sdJwtDelegationChecker` of `@wmp/session/sd-jwt`). */
export interface DelegationPresentationChecker {
  verify(
    credential: string,
    expected: {
      readonly principal: string;
      readonly delegate: string;
      readonly binding: DelegationSessionBinding | undefined;
      readonly now: number;
    },
  ): Promise<{ readonly scope: readonly string[]; readonly validUntil: number; readonly issuer: string }>;
}

/** The action each delegable method is (core §3.3: sending is `submit`, fetching or receiving `retrieve`). */
export const DELEGATED_ACTIONS: Readonly<Record<string, DelegationAction>> = Object.freeze({
  'wmp.message.deliver': 'submit',
  'wmp.relay.register': 'retrieve',
  'wmp.message.fetch': 'retrieve',
  'wmp.message.poll': 'retrieve',
  'wmp.message.ack': 'retrieve',
  'wmp.message.accept': 'retrieve',
  'wmp.message.reject': 'retrieve',
});
