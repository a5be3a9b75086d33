// The writer is exported by the Node entry of @wmp/transports (it is web-streams only, but that entry
// is where the package keeps it), so the app itself is exported from our Node entry.
import { SseWriter } from '@wmp/transports/node';
import type { Context } from 'hono';
import type { BoxStore } from '../storage/contracts/box-store.js';
import { authenticate } from './auth.js';
import type { BoxContext } from './context.js';
import { BoxApiError } from './errors.js';
import { MAX_FETCH_LIMIT, parseSeq } from './query.js';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  'x-accel-buffering': 'no',
};

/**
 * Copies a recipient's queue onto one SSE writer from a cursor: pages until the store has nothing
 * more, then waits for a wake-up. One copy runs at a time; a wake-up during a copy makes it go
 * round once more, so an event stored mid-copy is never missed and never sent twice.
 */
class QueuePump {
  #cursor: number;
  #running = false;
  #again = false;

  constructor(
    private readonly store: BoxStore,
    private readonly key: string,
    private readonly writer: SseWriter,
    private readonly now: () => number,
    after: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.#cursor = after;
  }

  wake = (): void => {
    if (this.#running) {
      this.#again = true;
      return;
    }
    void this.#run();
  };

  async #run(): Promise<void> {
    this.#running = true;
    try {
      do {
        this.#again = false;
        let more = true;
        while (more && !this.writer.ended) {
          const page = await this.store.fetch(this.key, this.#cursor, MAX_FETCH_LIMIT, this.now());
          for (const event of page.events) {
            if (!this.writer.write({ id: event.seq, data: JSON.stringify(event) })) return;
          }
          this.#cursor = page.next;
          more = page.more;
        }
      } while (this.#again && !this.writer.ended);
    } catch (error) {
      // The reader reconnects with Last-Event-ID; the cause goes to the host's log only.
      this.onError(error);
      this.writer.close();
    } finally {
      this.#running = false;
    }
  }
}

/**
 * `GET /events/stream`, signed: SSE of the caller's queue, `id:` = seq, from `Last-Event-ID` (or
 * the start), then live as events are stored. Nothing is removed: the reader still calls
 * `POST /delivered`. Streams are bounded per key and in total (`rate_limited` past the bound).
 */
export async function streamEvents(c: Context, box: BoxContext): Promise<Response> {
  const key = await authenticate(c, box, undefined, 'changes');
  const after = parseSeq(c.req.header('last-event-id'), 'Last-Event-ID');
  const { store, now, keepAliveMs, maxStreamQueuedBytes, onError } = box.options;
  let unsubscribe: (() => void) | undefined;
  let unregister: (() => void) | undefined;
  const writer = new SseWriter({
    keepAliveMs,
    maxQueuedBytes: maxStreamQueuedBytes,
    ...(box.options.outboundBudget ? { budget: box.options.outboundBudget } : {}),
    onEnd: () => {
      unsubscribe?.();
      unregister?.();
    },
  });
  const pump = new QueuePump(store, key, writer, now, after, onError);
  unregister = box.streams.add(key, { close: () => writer.close(), wake: pump.wake });
  if (unregister === undefined) {
    writer.close();
    throw new BoxApiError('rate_limited', { message: 'too many open streams' });
  }
  // Subscribed (on every node: a publish may land on another) before the first read, so an event
  // stored in between is read by the wake-up it sends.
  const subscribed = await box.wakeUps.subscribe(key, pump.wake);
  if (subscribed === undefined) {
    unregister();
    writer.close();
    throw new BoxApiError('rate_limited', { message: 'too many open streams' });
  }
  unsubscribe = subscribed;
  if (writer.ended) subscribed();
  // A first comment sends the headers at once, so the reader knows the stream is open.
  writer.comment('ready');
  pump.wake();
  return new Response(writer.body, { status: 200, headers: SSE_HEADERS });
}
