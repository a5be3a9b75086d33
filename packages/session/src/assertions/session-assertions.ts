// Where a responder checks identity assertions on its sessions (core §5.6): at create (nothing
// can be bound yet), at authenticate (the policy may require one) and on any other message.

import type { MlsSessionProvider } from '../services.js';
import type { SessionRecord } from '../session-model.js';
import { type AssertionChecker, assertionRejected, type VerifiedAssertion } from './checker.js';

/** What an assertion's audience may be: the session id, and its MLS group id when we are a member. */
async function audiencesOf(session: SessionRecord, mls: MlsSessionProvider | undefined): Promise<string[]> {
  const cipher = session.security.mode === 'tls' ? undefined : await mls?.cipherOf?.(session.id);
  return cipher?.groupId === undefined ? [session.id] : [session.id, cipher.groupId];
}

/**
 * At `wmp.session.create`: a presentation cannot carry a challenge that does not exist yet, so
 * one there is refused (`invalid_proof`), and a policy that requires assertions refuses inline
 * authentication (it would authenticate the session without one).
 */
export function checkAtCreate(
  checker: AssertionChecker | undefined,
  presented: readonly unknown[] | undefined,
  inlineIdentity: string | undefined,
): void {
  if (checker === undefined) return;
  if (presented !== undefined && presented.length > 0) throw assertionRejected('invalid_proof', checker.diagnostics);
  if (checker.required && inlineIdentity !== undefined) {
    throw assertionRejected('insufficient_claims', checker.diagnostics);
  }
}

/**
 * Verifies what a message presents on `session` (all must pass, -31012 otherwise); with
 * `required` (authentication under a policy that requires them), at least one must come.
 */
export async function checkPresented(
  checker: AssertionChecker | undefined,
  presented: readonly unknown[] | undefined,
  input: {
    readonly session: SessionRecord;
    readonly presenter: string | undefined;
    readonly now: number;
    readonly mls: MlsSessionProvider | undefined;
    readonly required?: boolean;
  },
): Promise<readonly VerifiedAssertion[]> {
  if (checker === undefined) return [];
  if (presented === undefined || presented.length === 0) {
    if (input.required === true && checker.required)
      throw assertionRejected('insufficient_claims', checker.diagnostics);
    return [];
  }
  return checker.verify(presented, {
    nonce: input.session.assertionNonce,
    audiences: await audiencesOf(input.session, input.mls),
    presenter: input.presenter,
    now: input.now,
  });
}
