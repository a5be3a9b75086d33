import type { Capabilities, Security } from '@wmp/jsonrpc-envelope';

export type SessionState = 'pending' | 'active' | 'closed';

/** One outstanding challenge: single use, time bounded (core §4.4.7). */
export interface ChallengeRecord {
  readonly value: string;
  readonly expiresAt: number;
}

/** What a responder keeps about a session. Plain data, so any store can persist it. */
export interface SessionRecord {
  readonly id: string;
  readonly version: string;
  /** The identity the initiator claimed (`wmp.sender` of create). */
  readonly initiator: string | undefined;
  /** Everyone who may take part: the initiator and the listed participants. */
  readonly participants: readonly string[];
  capabilities: Capabilities;
  security: Security;
  state: SessionState;
  /** Identities that authenticated on this session. */
  authenticated: string[];
  challenge: ChallengeRecord | undefined;
  /**
   * SHA-256 (b64url) of each current resumption token with the identity it resumes: tokens
   * themselves are never stored; each is single use and rotated on resume.
   */
  resumptionTokens: Array<{ hash: string; identity: string | undefined }>;
  readonly createdAt: number;
  expiresAt: number;
}

export function isExpired(session: SessionRecord, now: number): boolean {
  return now >= session.expiresAt;
}
