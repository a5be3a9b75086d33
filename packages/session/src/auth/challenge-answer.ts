// The one way either side answers a challenge (core §4.4.3, §4.4.5): the initiator's
// `wmp.session.authenticate` and the responder's mutual-authentication `auth`.
import { type Signer, signChallenge } from '@wmp/jcs-signing';
import { type ChallengeInput, challengePayload } from './challenge.js';
import { signJws } from './jws.js';
import type { X509Identity } from './x509-identity.js';

/** An Ed25519 signer answers with `signed_challenge`; an X.509 identity with `x5c` (and its chain). */
export type ChallengeProver = Signer | X509Identity;

/** The `auth` object: the type, the challenge, the signing time and the signature over `input`. */
export async function challengeAnswer(
  prover: ChallengeProver,
  input: ChallengeInput,
): Promise<Record<string, unknown>> {
  const { challenge, timestamp } = input;
  if ('x5c' in prover) {
    const signature = await signJws(challengePayload(input), prover.signer);
    return { type: 'x5c', x5c: [...prover.x5c], challenge, timestamp, signature };
  }
  const claims = { challenge, session_id: input.sessionId, sender: input.sender, timestamp };
  return { type: 'signed_challenge', challenge, timestamp, signature: await signChallenge(claims, prover) };
}
