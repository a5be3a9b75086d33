import { TransportError } from '../errors.js';

/** One dispatched server-sent event (WHATWG HTML §9.2.6). */
export interface SseEvent {
  /** The `event:` field, or `message` when the event named none. */
  readonly event: string;
  /** The `data:` lines joined with `\n`. */
  readonly data: string;
  /** The last event id seen on the stream so far (`''` when none); what a reconnect sends as `Last-Event-ID`. */
  readonly id: string;
}

export interface SseParserOptions {
  /** The last event id of an earlier connection, kept until the stream sets another. */
  readonly lastEventId?: string;
  /** Most characters buffered for one line or one event; more is an error. Default 4 MiB. */
  readonly maxEventChars?: number;
}

/** An event stream that breaks the parser's bounds. */
export class SseParseError extends TransportError {
  declare readonly code: 'ERR_SSE_TOO_LARGE';
  constructor() {
    super('ERR_SSE_TOO_LARGE', 'server-sent event too large');
    this.name = 'SseParseError';
  }
}

const LINE_END = /[\r\n]/g;

/**
 * The `text/event-stream` interpretation rules as a pure state machine: feed decoded text in
 * chunks split anywhere (even between CR and LF), get the events that completed. Lines end with
 * CRLF, LF or CR; `:` lines are comments; a leading BOM is dropped; an event cut off by the end of
 * the stream is never dispatched. No I/O, no timers: the caller owns the connection.
 */
export class SseParser {
  #partial = '';
  #data: string[] = [];
  #dataChars = 0;
  #event = '';
  #lastEventId: string;
  #retry: number | undefined;
  #skipLf = false;
  #atStart = true;
  readonly #max: number;

  constructor(options: SseParserOptions = {}) {
    this.#lastEventId = options.lastEventId ?? '';
    this.#max = options.maxEventChars ?? 4 * 1024 * 1024;
  }

  /** The last event id buffer (send it as `Last-Event-ID` when reconnecting). */
  get lastEventId(): string {
    return this.#lastEventId;
  }

  /** The reconnection time the server asked for with `retry:`, in ms, if it did. */
  get retry(): number | undefined {
    return this.#retry;
  }

  /** Feeds more of the stream; returns the events it completed, in order. Throws `SseParseError` past the bounds. */
  push(chunk: string): SseEvent[] {
    if (chunk.length === 0) return [];
    let text = chunk;
    if (this.#atStart) {
      this.#atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let start = 0;
    // A CR that ended the previous chunk already ended its line: its LF is not a second line end.
    if (this.#skipLf && text.charCodeAt(0) === 10) start = 1;
    this.#skipLf = false;
    const events: SseEvent[] = [];
    LINE_END.lastIndex = start;
    for (let m = LINE_END.exec(text); m !== null; m = LINE_END.exec(text)) {
      const end = m.index;
      const line = this.#partial + text.slice(start, end);
      this.#partial = '';
      this.#line(line, events);
      start = end + 1;
      if (text.charCodeAt(end) === 13) {
        if (start === text.length) this.#skipLf = true;
        else if (text.charCodeAt(start) === 10) start++;
      }
      LINE_END.lastIndex = start;
    }
    this.#partial += text.slice(start);
    if (this.#partial.length > this.#max) throw new SseParseError();
    return events;
  }

  /** The stream ended: whatever event was incomplete is discarded (the last event id and retry stay). */
  end(): void {
    this.#partial = '';
    this.#data = [];
    this.#dataChars = 0;
    this.#event = '';
    this.#skipLf = false;
    this.#atStart = true;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line.length === 0) {
      this.#dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment (keep-alives)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#dataChars += value.length + 1;
        if (this.#dataChars > this.#max) throw new SseParseError();
        this.#data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.#lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.#retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  #dispatch(events: SseEvent[]): void {
    const data = this.#data;
    const event = this.#event;
    this.#data = [];
    this.#dataChars = 0;
    this.#event = '';
    if (data.length === 0) return;
    events.push({ event: event === '' ? 'message' : event, data: data.join('\n'), id: this.#lastEventId });
  }
}
