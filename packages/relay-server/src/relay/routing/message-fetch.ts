import { InvalidParamsError, NotAuthorizedError, type ParamsOf } from '@wmp/jsonrpc-envelope';
import type { RequestHandler, SessionRecord, WmpContext } from '@wmp/session';
import type { QueueStore } from '../../storage/contracts/queue-store.js';
import { metaFor } from '../support/session-meta.js';
import { type RoutedMessage, STATUS_METHOD } from './routed-message.js';

/** What `wmp.message.fetch` reads: the caller's queue. */
export interface MessageFetchDeps {
  readonly queue: Pick<QueueStore, 'after'>;
  now(): number;
}

/** Messages one fetch returns at most (the default too). */
export const MAX_FETCH = 100;
/** Queue entries one fetch reads at most, matching or not: a fetch is bounded work. */
export const MAX_FETCH_SCAN = 500;
const PAGE = 100;

type FetchParams = ParamsOf<'wmp.message.fetch'> & { after?: unknown; limit?: unknown };

/**
 * The `next` of an answer: the queue position, not a message id, so paging goes on where it
 * stopped even when the message it names was acknowledged meanwhile.
 */
const CURSOR = /^seq:(0|[1-9]\d{0,15})$/;

/**
 * Our paging extension of `wmp.message.fetch` (the spec has none): `after` (a previous answer's
 * `next`, or a message id), `limit`.
 */
function pagingOf(params: FetchParams): { after: string | number | undefined; limit: number } {
  const { after, limit } = params;
  if (after !== undefined && (typeof after !== 'string' || after.length === 0 || after.length > 256)) {
    throw new InvalidParamsError({ reason: 'after: must be a cursor or a message id' });
  }
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1)) {
    throw new InvalidParamsError({ reason: 'limit: must be a positive integer' });
  }
  const position = after === undefined ? undefined : CURSOR.exec(after)?.[1];
  // Sixteen digits pass the pattern but may be past 2^53, where positions no longer count exactly.
  const seq = position === undefined ? undefined : Number(position);
  if (seq !== undefined && !Number.isSafeInteger(seq))
    throw new InvalidParamsError({ reason: 'after: cursor out of range' });
  return { after: seq ?? after, limit: Math.min(limit ?? MAX_FETCH, MAX_FETCH) };
}

/**
 * `wmp.message.fetch` (S-mls: the MLS relay queue): the caller's queued messages, nothing
 * removed, in queue order. `since_epoch` keeps those whose `wmp.epoch` is at least it (messages
 * without an epoch are not MLS traffic and are left out); `sessions` keeps those of the listed
 * sessions. Each item is the message's params, as the spec shows them; MLS group messages also
 * carry their `method`. Kept statuses are not part of it. Paging: `after` (the `next` of the
 * previous answer) and `limit` (<= 100); one call reads at most 500 queue entries, and
 * `has_more` says whether more remain.
 */
export function messageFetchHandler(s: MessageFetchDeps): RequestHandler<WmpContext> {
  return async (raw, ctx) => {
    const params = raw as FetchParams;
    const session = ctx.session as SessionRecord;
    if (ctx.sender === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
    // A delegate whose `retrieve` delegation held reads its principal's queue (core §3.3).
    const recipient = ctx.delegation?.principal ?? ctx.sender;
    const { after, limit } = pagingOf(params);
    const sessions = params.sessions === undefined ? undefined : new Set(params.sessions);
    const matches = (m: RoutedMessage) => {
      if (m.method === STATUS_METHOD) return false;
      const { epoch, session_id: id } = m.params.wmp as { epoch?: unknown; session_id?: string };
      if (params.since_epoch !== undefined && !(typeof epoch === 'number' && epoch >= params.since_epoch)) return false;
      return sessions === undefined || (id !== undefined && sessions.has(id));
    };

    const messages: Record<string, unknown>[] = [];
    let cursor: string | number | undefined = after;
    let next: string | undefined = after === undefined ? undefined : typeof after === 'number' ? `seq:${after}` : after;
    let scanned = 0;
    let more = true;
    while (more && messages.length < limit && scanned < MAX_FETCH_SCAN) {
      const page = await s.queue.after(recipient, cursor, Math.min(PAGE, MAX_FETCH_SCAN - scanned), s.now());
      more = page.more;
      for (const queued of page.messages) {
        if (messages.length === limit) {
          more = true; // the rest of this page is unread
          break;
        }
        scanned++;
        cursor = queued.seq;
        next = `seq:${queued.seq}`;
        const m = JSON.parse(queued.body) as RoutedMessage;
        if (matches(m))
          messages.push(m.method === 'wmp.message.deliver' ? m.params : { ...m.params, method: m.method });
      }
    }
    return {
      wmp: metaFor(session.id, session.version),
      messages,
      has_more: more,
      ...(next === undefined ? {} : { next }),
    };
  };
}
