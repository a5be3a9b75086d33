import type { KeyResolver, Signer } from '@wmp/jcs-signing';
import type { Auth } from '@wmp/jsonrpc-envelope';
import { NotAuthorizedError, rfc3339, type WmpError } from '@wmp/jsonrpc-envelope';
import { type Authenticator, authOutcome } from './authenticator.js';
import { challengeAnswer } from './challenge-answer.js';
import type { DidWebResolver } from './did-web.js';
import { reasonOf } from './reasons.js';
import { signedChallengeAuthenticator } from './signed-challenge.js';
import type { TrustAnchors } from './x509.js';
import type { X509Identity } from './x509-identity.js';

/** A responder's own identity: an Ed25519 DID signer, or an X.509 identity (`x509Identity`). */
export type ResponderIdentity = { readonly id: string; readonly signer: Signer } | X509Identity;

function isX509(identity: ResponderIdentity): identity is X509Identity {
  return 'x5c' in identity;
}

/**
 * The responder's `auth` for mutual authentication (core §4.4.5): a signature over JCS
 * `{challenge: nonce, session_id, sender: <responder id>, timestamp}`, as `signed_challenge`
 * (a DID signer) or `x5c` (with the chain). `sender` (ours) names the responder.
 */
export async function responderAuth(
  identity: ResponderIdentity,
  nonce: string,
  sessionId: string,
  now: number,
): Promise<Record<string, unknown>> {
  const input = { challenge: nonce, sessionId, sender: identity.id, timestamp: rfc3339(now) };
  const answer = await challengeAnswer(isX509(identity) ? identity : identity.signer, input);
  return { ...answer, sender: identity.id };
}

/** Who the initiator expects to answer (at least one of `id` and `trustAnchors`). */
export interface ExpectedResponder {
  /** Its identifier (a relay's well-known `relay_id`): the `auth` must prove exactly this one. */
  readonly id?: string;
  /** Accept an `x5c` responder whose leaf chains to one of these (and names the `id`, if given). */
  readonly trustAnchors?: TrustAnchors;
  /** For a did:web responder. */
  readonly didWeb?: DidWebResolver;
  /** For responders of other DID methods. */
  readonly resolver?: KeyResolver;
  readonly skewSeconds?: number;
}

/**
 * Verifies the responder's `auth` of a create result against the nonce we sent: the id it proves
 * must be `expected.id` (when given), an `x5c` chain needs `expected.trustAnchors`. Returns the
 * responder's id; anything else is -31002 `responder_auth_failed` with the cause in `detail`.
 */
export async function verifyResponderAuth(
  auth: unknown,
  input: { readonly nonce: string; readonly sessionId: string; readonly now?: number },
  expected: ExpectedResponder,
): Promise<string> {
  const fail = (detail: string): WmpError => new NotAuthorizedError({ reason: 'responder_auth_failed', detail });
  if (auth === null || typeof auth !== 'object' || Array.isArray(auth)) throw fail('missing');
  const a = auth as Auth & { sender?: unknown };
  const claimed = typeof a.sender === 'string' ? a.sender : undefined;
  if (expected.id !== undefined && claimed !== undefined && claimed !== expected.id) throw fail('unexpected_responder');
  const id = expected.id ?? claimed;
  if (id === undefined) throw fail('unexpected_responder');
  let authenticator: Authenticator;
  if (a.type === 'x5c') {
    if (!expected.trustAnchors) throw fail('untrusted_chain');
    // Loaded on demand: pkijs is only for those who use X.509.
    const { x5cAuthenticator } = await import('./x5c.js');
    authenticator = x5cAuthenticator({
      trustAnchors: expected.trustAnchors,
      // A responder (a relay) is a server: serverAuth when its certificate has an extKeyUsage.
      purpose: 'serverAuth',
      ...(expected.skewSeconds === undefined ? {} : { skewSeconds: expected.skewSeconds }),
    });
  } else if (a.type === 'signed_challenge') {
    if (expected.id === undefined) throw fail('unexpected_responder'); // a DID proves only the id we asked for
    authenticator = signedChallengeAuthenticator({
      ...(expected.resolver ? { resolver: expected.resolver, schemes: ['did'] } : {}),
      ...(expected.didWeb ? { didWeb: expected.didWeb } : {}),
      ...(expected.skewSeconds === undefined ? {} : { skewSeconds: expected.skewSeconds }),
    });
  } else {
    throw fail('unsupported_auth_type');
  }
  const now = input.now ?? Date.now();
  try {
    const result = await authenticator.authenticate({
      auth: a,
      sessionId: input.sessionId,
      sender: id,
      challenge: { value: input.nonce, expiresAt: Number.POSITIVE_INFINITY },
      timestamp: undefined,
      now,
    });
    return authOutcome(result, a.type).identity;
  } catch (e) {
    const reason = reasonOf(e);
    if (reason === undefined) throw e;
    throw fail(reason === 'unknown or used challenge' ? 'nonce_mismatch' : reason);
  }
}
