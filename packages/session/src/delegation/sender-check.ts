import { CapabilityNotSupportedError, type WmpMetadata } from '@wmp/jsonrpc-envelope';
import { checkSender } from '../enforce.js';
import type { SessionRecord } from '../session-model.js';
import {
  DELEGATED_ACTIONS,
  type DelegationVerifier,
  delegationRefused,
  type VerifiedDelegation,
} from './delegation.js';

/**
 * What a responder does with `wmp.sender_delegate` (`WmpServerOptions.delegation`): a verifier
 * checks it; `false` refuses any message that asks for delegation (-31005, never treated as
 * plain); undefined leaves sender binding as it is without delegation (the claimed sender must
 * be the authenticated one; a `sender_delegate` beside it is not read).
 */
export type DelegationPolicy = DelegationVerifier | false | undefined;

/**
 * Sender binding with delegation (core §3.3): a message whose `wmp.sender` is not the connection's
 * identity passes only with a `sender_delegate` naming that identity and an authorization that
 * holds for this method's action; everything else is -31002 as without delegation. Returns the
 * verified delegation, or undefined for a message sent for itself.
 */
export async function checkSenderDelegation(
  policy: DelegationPolicy,
  method: string,
  wmp: WmpMetadata | undefined,
  identity: string | undefined,
  session: SessionRecord,
  now: number,
): Promise<VerifiedDelegation | undefined> {
  const delegate = wmp?.sender_delegate;
  if (policy === undefined || delegate === undefined) {
    checkSender(wmp, identity, session);
    return undefined;
  }
  if (policy === false) throw new CapabilityNotSupportedError({ capability: 'erds', unsupported: ['delegation'] });
  const principal = wmp?.sender;
  const authenticated = identity ?? session.initiator;
  if (principal === undefined || authenticated === undefined || principal === authenticated) {
    throw delegationRefused('principal_required');
  }
  const action = DELEGATED_ACTIONS[method];
  if (action === undefined) throw delegationRefused('action_not_delegable');
  return policy.verify({
    principal,
    delegate,
    authenticated,
    action,
    binding: { nonce: session.assertionNonce, audiences: [session.id] },
    now,
  });
}
