import { b64urlEncode, sha256, utf8 } from '@wmp/jcs-signing';
import { newSecret } from './ids.js';
import { MAX_PARTICIPANTS, type SessionRecord, type TokenRecord } from './session-model.js';

/** How a token is kept: its SHA-256, so a leaked store cannot resume anyone. */
export function tokenHash(token: string): string {
  return b64urlEncode(sha256(utf8(token)));
}

/** One token per identity, and one for the not-yet-authenticated initiator: every participant can resume. */
export const MAX_TOKENS_PER_SESSION = MAX_PARTICIPANTS + 1;

/** A fresh resumption token and the record's token list with it replacing `identity`'s previous one. */
export function withNewToken(
  session: SessionRecord,
  identity: string | undefined,
): { token: string; tokens: readonly TokenRecord[] } {
  const token = newSecret('rt-');
  const tokens = session.resumptionTokens.filter((t) => t.identity !== identity);
  tokens.push({ hash: tokenHash(token), identity });
  if (tokens.length > MAX_TOKENS_PER_SESSION) tokens.shift();
  return { token, tokens };
}

/**
 * The entry of `token` among the record's tokens, or undefined. Hashes are compared as
 * fixed-length digests, so the lookup leaks nothing useful about the secret.
 */
export function findToken(session: SessionRecord, token: string): TokenRecord | undefined {
  const hash = tokenHash(token);
  return session.resumptionTokens.find((t) => t.hash === hash);
}
