import { ErrorCode, ErrorMessage, type JsonRpcId, type JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { PostBody } from './http-frames.js';

/** How a POST's wait ended: every answer came, the wait timed out, the session closed, or the client left. */
export type PendingOutcome = 'complete' | 'timeout' | 'closed' | 'aborted';

interface Slot {
  readonly id: JsonRpcId | null;
  response?: JsonRpcMessage;
}

/** The session headers of the reply that created the HTTP session. */
export interface SessionHeaders {
  readonly sessionId: string;
  readonly token: string;
}

/**
 * One POST waiting for the Peer's answers to the requests it carried. A response belongs to it
 * when its id matches an open slot (an id-null error fills a null slot: the answer to a body the
 * Peer could not parse); a batch answered as one array belongs to it as a whole. Other messages
 * the server sends about one of its requests (`relatedRequestId`) ride on it only when it streams.
 */
export class PendingPost {
  readonly batch: boolean;
  readonly streaming: boolean;
  /** Set when the answer routed here created the HTTP session: the reply carries the id and token. */
  sessionHeaders: SessionHeaders | undefined;
  readonly done: Promise<PendingOutcome>;
  /** Resolves at the first frame routed here, or when the wait ends without one. */
  readonly firstOutput: Promise<void>;

  readonly #slots: Slot[];
  readonly #extras: JsonRpcMessage[] = [];
  readonly #requestIds: ReadonlySet<JsonRpcId | null>;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #onSettle: (post: PendingPost) => void;
  #outcome: PendingOutcome | undefined;
  #resolveDone!: (outcome: PendingOutcome) => void;
  #resolveFirst!: () => void;
  #backlog: string[] = [];
  #listener: ((frame: string) => void) | undefined;
  #outputs = 0;

  constructor(body: PostBody, streaming: boolean, timeoutMs: number, onSettle: (post: PendingPost) => void) {
    this.batch = body.batch;
    this.streaming = streaming;
    this.#slots = body.expected.map((id) => ({ id }));
    this.#requestIds = new Set(body.expected);
    this.#onSettle = onSettle;
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    this.firstOutput = new Promise((resolve) => {
      this.#resolveFirst = resolve;
    });
    this.#timer = setTimeout(() => this.settle('timeout'), timeoutMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  get outcome(): PendingOutcome | undefined {
    return this.#outcome;
  }

  /** Frames routed here so far. */
  get outputs(): number {
    return this.#outputs;
  }

  /** Takes the frame if it belongs to this POST; true when taken. */
  offer(message: JsonRpcMessage | readonly JsonRpcMessage[], frame: string, related: JsonRpcId | undefined): boolean {
    if (this.#outcome !== undefined) return false;
    if (Array.isArray(message)) {
      const list = message as readonly JsonRpcMessage[];
      if (!list.some((m) => !('method' in m) && this.#openSlot(m.id) !== undefined)) return false;
      for (const m of list) if (!('method' in m)) this.#fill(m);
    } else {
      const m = message as JsonRpcMessage;
      if ('method' in m) {
        // A request or notification the server sends about one of our requests (progress).
        if (!this.streaming || related === undefined || !this.#requestIds.has(related)) return false;
      } else {
        if (this.#openSlot(m.id) === undefined) return false;
        this.#fill(m);
      }
    }
    this.#output(frame);
    if (this.#slots.every((s) => s.response !== undefined)) this.settle('complete');
    return true;
  }

  /** Streaming only: hands over the frames so far and every later one, in order. */
  stream(listener: (frame: string) => void): void {
    for (const frame of this.#backlog) listener(frame);
    this.#backlog = [];
    this.#listener = listener;
  }

  settle(outcome: PendingOutcome): void {
    if (this.#outcome !== undefined) return;
    this.#outcome = outcome;
    clearTimeout(this.#timer);
    this.#onSettle(this);
    this.#resolveFirst();
    this.#resolveDone(outcome);
  }

  /**
   * The JSON reply: the answers in body order (one object, or an array for a batch). A wait that
   * did not complete answers its missing requests with -32603 and `data.reason` (timeout, closed)
   * so that the client's pending calls end now rather than at their own timeout.
   */
  reply(): unknown {
    const reason = this.#outcome === 'complete' || this.#outcome === undefined ? 'incomplete' : this.#outcome;
    const answers: unknown[] = this.#slots.map(
      (s) =>
        s.response ?? {
          jsonrpc: '2.0',
          id: s.id,
          error: { code: ErrorCode.InternalError, message: ErrorMessage[ErrorCode.InternalError], data: { reason } },
        },
    );
    answers.push(...this.#extras);
    return this.batch ? answers : answers[0];
  }

  #openSlot(id: JsonRpcId | null): Slot | undefined {
    return this.#slots.find((s) => s.response === undefined && s.id === id);
  }

  #fill(response: JsonRpcMessage): void {
    const slot = this.#openSlot((response as { id: JsonRpcId | null }).id);
    if (slot) slot.response = response;
    else this.#extras.push(response);
  }

  #output(frame: string): void {
    this.#outputs++;
    if (this.streaming) {
      if (this.#listener) this.#listener(frame);
      else this.#backlog.push(frame);
    }
    this.#resolveFirst();
  }
}
