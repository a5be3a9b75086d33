import { type KeyResolver, verifyMandate, type X5cChainVerifier } from '@wmp/jcs-signing';
import {
  type DelegationPresentationChecker,
  type DelegationRequest,
  type DelegationVerifier,
  delegationRefused,
  type VerifiedDelegation,
} from './delegation.js';

export interface DelegationVerifierOptions {
  /** Ed25519 keys of principals by kid (mandates); default did:key and did:jwk. */
  readonly resolver?: KeyResolver;
  /** The chain check of an X.509 principal's mandate (`x5cSignatureVerifier` of `@wmp/session/x509`). */
  readonly x5c?: X5cChainVerifier;
  /** `verifiable_presentation` authorizations (`sdJwtDelegationChecker`); without it they are `unsupported_type`. */
  readonly presentations?: DelegationPresentationChecker;
}

type Authorization = { type?: unknown; credential?: unknown };

/**
 * The -31015 checks of core §3.3, in a fixed order: the delegate is the one who authenticated,
 * its authorization is a `mandate` (a JWS by the principal) or a `verifiable_presentation` (an
 * SD-JWT VC naming the delegate, issued by the principal or an issuer trusted for it, key-bound
 * to the delegate), the action is in the signed scope and the delegation has not expired. What
 * rules is what was signed; the unsigned `scope` and `valid_until` beside the credential are
 * never read.
 */
export function delegationVerifier(options: DelegationVerifierOptions = {}): DelegationVerifier {
  const mandates = {
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(options.x5c ? { x5c: options.x5c } : {}),
  };
  return {
    async verify(request: DelegationRequest): Promise<VerifiedDelegation> {
      const d = request.delegate as { id?: unknown; authorization?: Authorization } | null;
      if (d === null || typeof d !== 'object' || typeof d.id !== 'string') throw delegationRefused('malformed');
      if (d.id !== request.authenticated) throw delegationRefused('delegate_not_authenticated');
      const authorization = d.authorization;
      if (authorization === undefined || typeof authorization.credential !== 'string') {
        throw delegationRefused('malformed');
      }
      let verified: VerifiedDelegation;
      if (authorization.type === 'mandate') {
        const m = await verifyMandate(authorization.credential, mandates);
        if (m.principal !== request.principal) throw delegationRefused('principal_mismatch');
        if (m.delegate !== d.id) throw delegationRefused('delegate_mismatch');
        verified = {
          principal: m.principal,
          delegate: m.delegate,
          type: 'mandate',
          scope: m.scope,
          validUntil: m.validUntil,
          issuer: m.principal,
        };
      } else if (authorization.type === 'verifiable_presentation' && options.presentations !== undefined) {
        const p = await options.presentations.verify(authorization.credential, {
          principal: request.principal,
          delegate: d.id,
          binding: request.binding,
          now: request.now,
        });
        verified = {
          principal: request.principal,
          delegate: d.id,
          type: 'verifiable_presentation',
          scope: p.scope,
          validUntil: p.validUntil,
          issuer: p.issuer,
        };
      } else {
        throw delegationRefused('unsupported_type');
      }
      if (!verified.scope.includes(request.action)) throw delegationRefused('out_of_scope');
      if (!(verified.validUntil > request.now)) throw delegationRefused('expired');
      return verified;
    },
  };
}
