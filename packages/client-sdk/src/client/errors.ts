import { ClientSdkError } from '../errors.js';

/** Why a `WmpClient` call failed on this side (a peer's refusal is a `WmpError` instead). */
export type WmpClientErrorCode =
  /** The URL is not `ws:`, `wss:`, `http:` or `https:`, or does not parse. */
  | 'ERR_CLIENT_URL'
  /** `/.well-known/wmp-configuration` answered but could not be read as a configuration. */
  | 'ERR_CLIENT_DISCOVERY'
  /** No binding the relay offers can be used here (e.g. WebSocket only, and no WebSocket). */
  | 'ERR_CLIENT_NO_TRANSPORT'
  /** Too many calls are waiting for the connection to come back. */
  | 'ERR_CLIENT_TOO_MANY_WAITING'
  /** Too many flows are being followed at once. */
  | 'ERR_CLIENT_TOO_MANY_FLOWS'
  /** Too many group sessions on one client. */
  | 'ERR_CLIENT_TOO_MANY_GROUPS'
  /** A group session this client does not hold (never joined, closed, or lost). */
  | 'ERR_CLIENT_UNKNOWN_GROUP'
  /** A session answer without what it must carry (a message id, a session id). */
  | 'ERR_CLIENT_BAD_ANSWER'
  /** The mailbox fallback has no card for the recipient. */
  | 'ERR_CLIENT_NO_CARD'
  /** The relay did not prove the identity it was expected to have (mutual authentication). */
  | 'ERR_CLIENT_RELAY_AUTH'
  /** The other party of an end-to-end session could not answer it (the relay would host it instead). */
  | 'ERR_CLIENT_PEER_UNREACHABLE'
  /** This client answers sessions already (`onSession` once per client). */
  | 'ERR_CLIENT_ALREADY_SERVING'
  /** `tls` options where they cannot apply: a browser, or a `fetch`/`WebSocket` of the application's own. */
  | 'ERR_CLIENT_TLS_OPTIONS'
  /** An evidence query names neither or both of `messageId` and `sessionId`, or a range with `messageId`. */
  | 'ERR_CLIENT_EVIDENCE_QUERY'
  /** The evidence repository gave no answer, or one that could not be read. */
  | 'ERR_CLIENT_EVIDENCE';

const MESSAGES: Readonly<Record<WmpClientErrorCode, string>> = Object.freeze({
  ERR_CLIENT_URL: 'unusable URL (ws:, wss:, http: or https:)',
  ERR_CLIENT_DISCOVERY: 'the relay configuration could not be read',
  ERR_CLIENT_NO_TRANSPORT: 'no usable transport',
  ERR_CLIENT_TOO_MANY_WAITING: 'too many calls waiting for the connection',
  ERR_CLIENT_TOO_MANY_FLOWS: 'too many flows followed at once',
  ERR_CLIENT_TOO_MANY_GROUPS: 'too many group sessions',
  ERR_CLIENT_UNKNOWN_GROUP: 'unknown group session',
  ERR_CLIENT_BAD_ANSWER: 'unexpected answer from the relay',
  ERR_CLIENT_NO_CARD: 'no card for the recipient',
  ERR_CLIENT_RELAY_AUTH: 'the relay did not prove its identity',
  ERR_CLIENT_PEER_UNREACHABLE: 'the other party could not answer the session',
  ERR_CLIENT_ALREADY_SERVING: 'this client answers sessions already',
  ERR_CLIENT_TLS_OPTIONS: 'TLS options need the fetch and WebSocket of @wmp/client-sdk/node',
  ERR_CLIENT_EVIDENCE_QUERY: 'an evidence query names exactly one of messageId and sessionId',
  ERR_CLIENT_EVIDENCE: 'the evidence repository could not be read',
});

/** A local failure of a `WmpClient`: a stable `code` and a fixed message that carries no peer data. */
export class WmpClientError extends ClientSdkError {
  declare readonly code: WmpClientErrorCode;
  constructor(code: WmpClientErrorCode, options?: { cause?: unknown }) {
    super(code, MESSAGES[code], options);
    this.name = 'WmpClientError';
  }
}
