import { b64urlEncode, sha256, utf8 } from '@wmp/jcs-signing';
import { newSecret } from './ids.js';
import type { SessionRecord } from './session-model.js';

/** How a token is kept: its SHA-256, so a leaked store cannot resume anyone. */
export function tokenHash(token: string): string {
  return b64urlEncode(sha256(utf8(token)));
}

const MAX_TOKENS_PER_SESSION = 64;

/** Issues a fresh resumption token for `identity`, replacing that identity's previous one. */
export function issueResumptionToken(session: SessionRecord, identity: string | undefined): string {
  const token = newSecret('rt-');
  session.resumptionTokens = session.resumptionTokens.filter((t) => t.identity !== identity);
  session.resumptionTokens.push({ hash: tokenHash(token), identity });
  if (session.resumptionTokens.length > MAX_TOKENS_PER_SESSION) session.resumptionTokens.shift();
  return token;
}

/**
 * Finds and consumes the entry for `token`. Hashes are compared as fixed-length digests, so the
 * lookup leaks nothing useful about the secret.
 */
export function consumeResumptionToken(
  session: SessionRecord,
  token: string,
): { identity: string | undefined } | undefined {
  const hash = tokenHash(token);
  const at = session.resumptionTokens.findIndex((t) => t.hash === hash);
  if (at < 0) return undefined;
  const [entry] = session.resumptionTokens.splice(at, 1);
  return { identity: entry!.identity };
}
