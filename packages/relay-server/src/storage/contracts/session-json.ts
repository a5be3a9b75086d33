import type { SessionRecord } from '@wmp/session';
import { StoreInputError } from '../errors.js';

/** A session record as the durable adapters store it: JSON text (it holds only token hashes). */
export function encodeSession(session: SessionRecord): string {
  if (typeof session?.id !== 'string' || !Number.isFinite(session.expiresAt)) {
    throw new StoreInputError('not a session record');
  }
  return JSON.stringify(session);
}

/** JSON drops `undefined` members; the record type has them as required keys, so they are put back. */
export function decodeSession(text: string): SessionRecord {
  const record = JSON.parse(text) as SessionRecord;
  return {
    ...record,
    initiator: record.initiator,
    challenge: record.challenge,
    resumptionTokens: record.resumptionTokens.map(({ hash, identity }) => ({ hash, identity })),
  };
}
