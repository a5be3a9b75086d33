import type { Signer } from '@wmp/jcs-signing';
import { parseStrictJson } from '@wmp/jsonrpc-envelope';
import { OHAN_API_PATH, type OhanCard, type OhanEvent, signRequest } from '@wmp/ohan-seal';
import { type FetchLike, readBoundedBody } from '@wmp/transports';
import { type BoxLimitsInfo, parseBoxLimits } from './box-limits.js';
import { MailboxError } from './errors.js';

/** Events asked for per page (the box serves at most 500). */
export const PAGE_LIMIT = 100;
/** Ids per `POST /delivered` (the box's bound). */
export const MAX_IDS_PER_DELIVERED = 500;

/** Bound of any answer that is not a page of events: limits, cards, allow lists, errors. */
const SMALL_ANSWER_BYTES = 1024 * 1024;
const MAX_JSON_DEPTH = 8;

export interface BoxClientOptions {
  /** The box origin, exactly as on the card (what signed requests name). */
  readonly origin: string;
  readonly signer: Signer;
  readonly fetch: FetchLike;
  /** Per call, headers and body (for a stream: until its headers). */
  readonly timeoutMs: number;
  /** Largest event accepted in a page or on a stream. */
  readonly maxEventBytes: number;
  readonly now: () => number;
}

/** One event as a box served it: its seq and the value, not yet verified. */
export interface ServedEvent {
  readonly seq: number;
  readonly value: unknown;
}

export interface ServedPage {
  readonly events: readonly ServedEvent[];
  readonly next: number;
  readonly more: boolean;
}

interface CallOptions {
  readonly body?: string;
  readonly signed?: boolean;
  readonly signal?: AbortSignal | undefined;
  readonly maxBytes?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

interface Answer {
  readonly status: number;
  readonly value: unknown;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function isSeq(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The box API of one relay, for one identity: every call maps an error answer to `MailboxError`
 * with the box's code, bounds what it reads, and gives up after `timeoutMs`. Signed calls sign
 * exactly the target and body bytes they send, each with a fresh nonce.
 */
export class BoxClient {
  constructor(readonly options: BoxClientOptions) {}

  get origin(): string {
    return this.options.origin;
  }

  async limits(signal?: AbortSignal): Promise<BoxLimitsInfo> {
    const { value } = await this.#call('GET', '/limits', { signal });
    const limits = parseBoxLimits(value);
    if (!limits) throw this.#error('bad_response');
    return limits;
  }

  /** `POST /events`: `stored` (202) or `duplicate` (200, already there). */
  async publish(event: OhanEvent, signal?: AbortSignal): Promise<'stored' | 'duplicate'> {
    const { status, value } = await this.#call('POST', '/events', { body: JSON.stringify(event), signal });
    if (!isObject(value) || value.id !== event.id) throw this.#error('bad_response', status);
    return status === 202 ? 'stored' : 'duplicate';
  }

  /** `GET /events?after=&limit=`, signed: one page of the caller's queue, checked for order. */
  async fetchPage(after: number, signal?: AbortSignal): Promise<ServedPage> {
    const target = `/events?after=${after}&limit=${PAGE_LIMIT}`;
    const maxBytes = PAGE_LIMIT * (this.options.maxEventBytes + 32) + 1024;
    const { value } = await this.#call('GET', target, { signed: true, signal, maxBytes });
    if (!isObject(value) || !Array.isArray(value.events) || value.events.length > PAGE_LIMIT) {
      throw this.#error('bad_response');
    }
    const { next, more } = value;
    if (!isSeq(next) || next < after || typeof more !== 'boolean') throw this.#error('bad_response');
    let last = after;
    const events: ServedEvent[] = [];
    for (const e of value.events) {
      // In seq order, after the cursor, ending at `next`: anything else would loop or skip.
      if (!isObject(e) || !isSeq(e.seq) || e.seq <= last) throw this.#error('bad_response');
      last = e.seq;
      events.push({ seq: e.seq, value: e });
    }
    if (last !== next || (more && next === after)) throw this.#error('bad_response');
    return { events, next, more };
  }

  /** `POST /delivered`, signed: removes these ids from the caller's queue; how many went. */
  async delivered(ids: readonly string[], signal?: AbortSignal): Promise<number> {
    const { value } = await this.#call('POST', '/delivered', { body: JSON.stringify({ ids }), signed: true, signal });
    if (!isObject(value) || !isSeq(value.removed)) throw this.#error('bad_response');
    return value.removed;
  }

  async getAllow(signal?: AbortSignal): Promise<string[]> {
    return this.#contacts(await this.#call('GET', '/allow', { signed: true, signal }));
  }

  async putAllow(contacts: readonly string[], signal?: AbortSignal): Promise<string[]> {
    const body = JSON.stringify({ contacts });
    return this.#contacts(await this.#call('PUT', '/allow', { body, signed: true, signal }));
  }

  /** `POST /cards`: `stored` (201, new or newer) or `unchanged` (200, the box has one as new). */
  async postCard(card: OhanCard, signal?: AbortSignal): Promise<'stored' | 'unchanged'> {
    const { status } = await this.#call('POST', '/cards', { body: JSON.stringify(card), signal });
    return status === 201 ? 'stored' : 'unchanged';
  }

  /** `POST /cards/lookup`: the card as served (unverified), or `undefined` on 404. */
  async lookupCard(key: string, signal?: AbortSignal): Promise<unknown> {
    try {
      return (await this.#call('POST', '/cards/lookup', { body: JSON.stringify({ key }), signal })).value;
    } catch (error) {
      if (error instanceof MailboxError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  /**
   * `GET /events/stream`, signed, from `after` (`Last-Event-ID`): the response body once the box
   * answered 200. `timeoutMs` bounds the wait for the headers only; `signal` ends the stream.
   */
  async openStream(after: number, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = after > 0 ? { 'last-event-id': String(after) } : {};
    const deadline = this.#deadline(signal);
    try {
      const response = await this.#send('GET', '/events/stream', { signed: true, signal: deadline.signal, headers });
      if (!response.body) throw this.#error('bad_response', response.status);
      return response.body;
    } catch (error) {
      throw this.#mapFailure(error, signal);
    } finally {
      // Only the timer: the body keeps reading under `deadline.signal`, which `signal` still ends.
      deadline.clearTimer();
    }
  }

  #contacts({ value }: Answer): string[] {
    if (!isObject(value) || !Array.isArray(value.contacts) || !value.contacts.every((c) => typeof c === 'string')) {
      throw this.#error('bad_response');
    }
    return value.contacts as string[];
  }

  async #call(method: string, path: string, options: CallOptions): Promise<Answer> {
    const maxBytes = options.maxBytes ?? SMALL_ANSWER_BYTES;
    const deadline = this.#deadline(options.signal);
    try {
      const response = await this.#send(method, path, { ...options, signal: deadline.signal });
      const bytes = await readBoundedBody(response.body, maxBytes, response.headers.get('content-length'));
      if (bytes === undefined) throw this.#error('bad_response', response.status);
      return { status: response.status, value: this.#json(bytes, maxBytes, response.status) };
    } catch (error) {
      throw this.#mapFailure(error, options.signal);
    } finally {
      deadline.clearTimer();
      deadline.release();
    }
  }

  /** Sends one request under the caller's deadline; a non-2xx answer becomes the box's error. */
  async #send(method: string, path: string, options: CallOptions): Promise<Response> {
    const target = OHAN_API_PATH + path;
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.signed) {
      headers.authorization = await signRequest({
        signer: this.options.signer,
        origin: this.options.origin,
        method,
        target,
        body: options.body,
        ts: new Date(this.options.now()),
      });
    }
    let response: Response;
    try {
      response = await this.options.fetch(this.options.origin + target, {
        method,
        headers,
        signal: options.signal ?? null,
        ...(options.body === undefined ? {} : { body: options.body }),
      });
    } catch (error) {
      throw this.#mapFailure(error, options.signal);
    }
    if (response.status >= 200 && response.status < 300) return response;
    throw await this.#errorAnswer(response);
  }

  /** The box's error answer `{error: {code, message, reason?}}`; anything else keeps only the status. */
  async #errorAnswer(response: Response): Promise<MailboxError> {
    const max = 16 * 1024;
    const bytes = await readBoundedBody(response.body, max, response.headers.get('content-length')).catch(
      () => undefined,
    );
    let body: unknown;
    try {
      body = bytes === undefined ? undefined : parseStrictJson(decoder.decode(bytes), { maxBytes: max, maxDepth: 4 });
    } catch {
      body = undefined; // a proxy's HTML page, say
    }
    const error = isObject(body) && isObject(body.error) ? body.error : {};
    return MailboxError.fromAnswer(this.options.origin, response.status, error.code, error.reason);
  }

  #json(bytes: Uint8Array, maxBytes: number, status: number): unknown {
    try {
      return parseStrictJson(decoder.decode(bytes), { maxBytes, maxDepth: MAX_JSON_DEPTH });
    } catch {
      throw this.#error('bad_response', status);
    }
  }

  /**
   * A signal that fires on the caller's abort or after `timeoutMs` (with a `network` error as its
   * reason). `clearTimer()` stops the timer; `release()` unhooks it from the caller's signal.
   */
  #deadline(signal: AbortSignal | undefined): { signal: AbortSignal; clearTimer(): void; release(): void } {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) controller.abort(signal.reason);
    else signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(this.#error('network')), this.options.timeoutMs);
    return {
      signal: controller.signal,
      clearTimer: () => clearTimeout(timer),
      release: () => signal?.removeEventListener('abort', onAbort),
    };
  }

  /** The caller's abort stays the caller's reason; anything else that is not ours is `network`. */
  #mapFailure(error: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason;
    if (error instanceof MailboxError) return error;
    return new MailboxError('network', { relay: this.options.origin }, { cause: error });
  }

  #error(code: 'bad_response' | 'network', status?: number): MailboxError {
    return new MailboxError(code, { relay: this.options.origin, ...(status === undefined ? {} : { status }) });
  }
}
