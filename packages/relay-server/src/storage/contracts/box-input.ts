import { utf8Length } from '@wmp/jsonrpc-envelope';
import { type OhanCard, type OhanEvent, parseUtcTime, stampStrength } from '@wmp/ohan-seal';
import { StoreInputError } from '../errors.js';

/** Any UTF-16 code unit outside ASCII (surrogates included). */
const NON_ASCII = /[\u0080-\uffff]/;

/** What a box stores about one event: the facts the rules need, and the JSON it serves. */
export interface BoxEventRecord {
  readonly id: string;
  readonly recipient: string;
  readonly sender: string;
  /** The committed stamp strength (`stamp.bits`, 0 without a stamp). */
  readonly strength: number;
  readonly expiresAt: number;
  /** The event JSON without `seq`, exactly as it is served back. */
  readonly json: string;
  /** UTF-8 length of `json`: what the byte caps count. */
  readonly size: number;
}

/**
 * The record of a verified event. The size is that of the JSON the box keeps and serves (not of
 * the request body, whose whitespace the box does not keep), so totals always equal the sum of
 * what is stored. A `seq` on the input is dropped: the box assigns its own. `knownJson` is the
 * caller's `JSON.stringify(event)` of an event without `seq`, when it has it.
 */
export function boxEventRecord(event: OhanEvent, knownJson?: string): BoxEventRecord {
  const expiresAt = parseUtcTime(event.exp);
  if (expiresAt === undefined || typeof event.id !== 'string' || typeof event.to !== 'string') {
    throw new StoreInputError('not a verified event');
  }
  const json = knownJson ?? jsonWithoutSeq(event);
  return {
    id: event.id,
    recipient: event.to,
    sender: event.from_key,
    strength: stampStrength(event),
    expiresAt,
    json,
    // A verified event is ASCII (every field is): one regex scan instead of a loop over every character.
    size: NON_ASCII.test(json) ? utf8Length(json) : json.length,
  };
}

/** An allow list as stored: strings, duplicates dropped, order kept, bounded. */
export function allowList(contacts: readonly string[], max: number): Set<string> {
  if (!Array.isArray(contacts)) throw new StoreInputError('contacts must be an array');
  const list = new Set<string>();
  for (const contact of contacts) {
    if (typeof contact !== 'string' || contact.length === 0) throw new StoreInputError('contacts must be keys');
    list.add(contact);
  }
  if (list.size > max) throw new StoreInputError(`at most ${max} contacts`);
  return list;
}

/** A card's `ts` in ms, for "a newer ts replaces an older card". */
export function cardTime(card: OhanCard): number {
  const ts = parseUtcTime(card?.ts);
  if (ts === undefined || typeof card.key !== 'string') throw new StoreInputError('not a verified card');
  return ts;
}

function jsonWithoutSeq(event: OhanEvent): string {
  const { seq: _seq, ...rest } = event as OhanEvent & { seq?: unknown };
  return JSON.stringify(rest);
}
