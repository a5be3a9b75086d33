import { createHmac } from 'node:crypto';
import { constantTimeEqual, createSessionToken } from './http-token.js';

/**
 * How the HTTP binding makes and checks the secret that binds an HTTP session to a WMP session.
 * The default keeps random tokens known to one process; a cluster uses `keyedSessionTokens`, so
 * that any node can check a token another node issued (docs/architecture.md, "Cluster": no sticky
 * sessions).
 */
export interface SessionTokens {
  issue(sessionId: string): string;
  /** Whether `token` was issued for `sessionId` (by any node holding the key); constant time. */
  verify(sessionId: string, token: string): boolean;
}

/** Random tokens (256 bits), checked against the HTTP sessions this process holds. */
export const randomSessionTokens: SessionTokens = {
  issue: () => createSessionToken(),
  verify: () => false,
};

const PREFIX = 't1.';

/**
 * Tokens any holder of `key` can check: `t1.<nonce>.<HMAC-SHA256(key, session id, nonce)>`, one
 * nonce per HTTP session (so several HTTP sessions of one WMP session still have tokens of their
 * own). The nodes of a cluster derive `key` from the relay key they share.
 */
export function keyedSessionTokens(key: Uint8Array): SessionTokens {
  if (key.byteLength < 32) throw new RangeError('a session token key needs at least 32 bytes');
  const mac = (sessionId: string, nonce: string) =>
    createHmac('sha256', key).update(`wmp-http-session\0${sessionId}\0${nonce}`).digest('base64url');
  return {
    issue(sessionId) {
      const nonce = createSessionToken().slice(0, 22);
      return `${PREFIX}${nonce}.${mac(sessionId, nonce)}`;
    },
    verify(sessionId, token) {
      if (!token.startsWith(PREFIX) || token.length > 128) return false;
      const dot = token.indexOf('.', PREFIX.length);
      if (dot < 0) return false;
      return constantTimeEqual(token.slice(dot + 1), mac(sessionId, token.slice(PREFIX.length, dot)));
    },
  };
}
