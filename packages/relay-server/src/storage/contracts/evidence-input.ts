import { utf8Length } from '@wmp/jsonrpc-envelope';
import { StoreInputError } from '../errors.js';
import type { EvidenceCase, EvidenceEntry, EvidenceQuery } from './evidence-store.js';

/** Longest id of a record, message, session or party kept. */
const MAX_ID = 2048;
/** Largest record body (the record, its JWS and a timestamp token fit in far less). */
export const MAX_EVIDENCE_BODY_BYTES = 64 * 1024;
/** Most parties one record names (a submission names every recipient). */
export const MAX_EVIDENCE_PARTIES = 512;
/** Most event types a case lists. */
const MAX_EVENT_TYPES = 64;

function id(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID) {
    throw new StoreInputError(`${what} must be a string of 1 to ${MAX_ID} characters`);
  }
  return value;
}

function optionalId(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : id(value, what);
}

function time(value: unknown, what: string): number {
  if (!Number.isSafeInteger(value)) throw new StoreInputError(`${what} must be an integer (ms)`);
  return value as number;
}

/** A case as a store keeps it, after the checks every adapter makes the same way. */
export function checkCase(c: EvidenceCase): EvidenceCase {
  const eventTypes = c?.eventTypes;
  if (!Array.isArray(eventTypes) || eventTypes.length > MAX_EVENT_TYPES) {
    throw new StoreInputError(`eventTypes must be an array of at most ${MAX_EVENT_TYPES}`);
  }
  for (const t of eventTypes) id(t, 'an event type');
  const recipients = c.recipients;
  if (!Array.isArray(recipients) || recipients.length > MAX_EVIDENCE_PARTIES) {
    throw new StoreInputError(`recipients must be an array of at most ${MAX_EVIDENCE_PARTIES}`);
  }
  for (const r of recipients) id(r, 'a recipient');
  return {
    messageId: id(c.messageId, 'messageId'),
    sender: id(c.sender, 'sender'),
    recipients: [...recipients],
    sessionId: optionalId(c.sessionId, 'sessionId'),
    contentHash: id(c.contentHash, 'contentHash'),
    submittedAt: time(c.submittedAt, 'submittedAt'),
    firstEvidenceId: id(c.firstEvidenceId, 'firstEvidenceId'),
    eventTypes: [...eventTypes],
    via: optionalId(c.via, 'via'),
    consignment: optionalId(c.consignment, 'consignment'),
    expiresAt: time(c.expiresAt, 'expiresAt'),
  };
}

/** A record as a store keeps it, after the same checks. */
export function checkEntry(e: EvidenceEntry): EvidenceEntry {
  const parties = e?.parties;
  if (!Array.isArray(parties) || parties.length === 0 || parties.length > MAX_EVIDENCE_PARTIES) {
    throw new StoreInputError(`parties must name 1 to ${MAX_EVIDENCE_PARTIES} identities`);
  }
  for (const p of parties) id(p, 'a party');
  if (typeof e.body !== 'string' || utf8Length(e.body) > MAX_EVIDENCE_BODY_BYTES) {
    throw new StoreInputError(`body must be a string of at most ${MAX_EVIDENCE_BODY_BYTES} bytes`);
  }
  return {
    id: id(e.id, 'id'),
    messageId: id(e.messageId, 'messageId'),
    sender: id(e.sender, 'sender'),
    sessionId: optionalId(e.sessionId, 'sessionId'),
    eventType: id(e.eventType, 'eventType'),
    eventTime: time(e.eventTime, 'eventTime'),
    issuer: id(e.issuer, 'issuer'),
    parties: [...new Set(parties)],
    body: e.body,
    expiresAt: time(e.expiresAt, 'expiresAt'),
  };
}

/** A query's checked form: its key and, for a session, the time range (inclusive, ms). */
export type CheckedQuery =
  | { readonly messageId: string }
  | { readonly sessionId: string; readonly since: number; readonly until: number };

export function checkQuery(query: EvidenceQuery, party: string): CheckedQuery {
  id(party, 'party');
  if (query !== null && typeof query === 'object' && 'messageId' in query) {
    return { messageId: id(query.messageId, 'messageId') };
  }
  if (query === null || typeof query !== 'object' || !('sessionId' in query)) {
    throw new StoreInputError('a query names a messageId or a sessionId');
  }
  return {
    sessionId: id(query.sessionId, 'sessionId'),
    since: query.since === undefined ? 0 : time(query.since, 'since'),
    until: query.until === undefined ? Number.MAX_SAFE_INTEGER : time(query.until, 'until'),
  };
}

/** A page cursor: the position of the last entry returned, as decimal text. */
export function cursorOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (typeof cursor !== 'string' || !/^\d{1,15}$/.test(cursor)) throw new StoreInputError('not a page cursor');
  return Number(cursor);
}

/** A case as an adapter stored it (the JSON of a checked case, written by `open`). */
export function decodeCase(text: string): EvidenceCase {
  const c = JSON.parse(text) as EvidenceCase;
  return {
    messageId: c.messageId,
    sender: c.sender,
    recipients: c.recipients ?? [],
    sessionId: c.sessionId ?? undefined,
    contentHash: c.contentHash,
    submittedAt: c.submittedAt,
    firstEvidenceId: c.firstEvidenceId,
    eventTypes: c.eventTypes,
    via: c.via ?? undefined,
    consignment: c.consignment ?? undefined,
    expiresAt: c.expiresAt,
  };
}
