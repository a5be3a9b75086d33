import { createPrivateKey } from 'node:crypto';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import { challengePayload } from '../src/auth/challenge.js';
import { importParams, type JwsAlgorithm, type JwsSigner, signJws, webCryptoSigner } from '../src/auth/jws.js';
import type { Peer } from '../src/index.js';
import type { TestKey } from './pki.js';

export { refusal } from '../../../test-support/code-of.js';

/** A WebCrypto signer over a test key, for any algorithm its type allows. */
export async function signerOf(key: TestKey, alg: JwsAlgorithm): Promise<JwsSigner> {
  const pkcs8 = new Uint8Array(createPrivateKey(key.pkcs8Pem).export({ type: 'pkcs8', format: 'der' }));
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, importParams(alg) as Algorithm, false, ['sign']);
  return webCryptoSigner(privateKey, alg);
}

export function nowRfc3339(ms = Date.now()): string {
  return rfc3339(ms);
}

export interface ChallengeRound {
  readonly sessionId: string;
  readonly challenge: string;
}

/** `wmp.session.create` as `sender`: the session id and challenge. */
export async function createAs(peer: Peer, sender: string): Promise<ChallengeRound> {
  const r = (await peer.request('wmp.session.create', { wmp: { version: '0.1', sender } })) as {
    wmp: { session_id: string };
    challenge: string;
  };
  return { sessionId: r.wmp.session_id, challenge: r.challenge };
}

/** Answers a challenge with an `x5c` auth; `tweak` changes what is signed or sent. */
export async function answerX5c(
  peer: Peer,
  round: ChallengeRound,
  o: {
    sender: string;
    x5c: unknown;
    signer: JwsSigner;
    signedSender?: string;
    signedSession?: string;
    type?: string;
  },
): Promise<unknown> {
  const timestamp = nowRfc3339();
  const signature = await signJws(
    challengePayload({
      challenge: round.challenge,
      sessionId: o.signedSession ?? round.sessionId,
      sender: o.signedSender ?? o.sender,
      timestamp,
    }),
    o.signer,
  );
  return peer.request('wmp.session.authenticate', {
    wmp: { version: '0.1', session_id: round.sessionId, sender: o.sender },
    auth: { type: o.type ?? 'x5c', x5c: o.x5c, challenge: round.challenge, signature, timestamp },
  });
}
