import { parseStrictJson } from '@wmp/jsonrpc-envelope';
import { abortableSleep, ReconnectPolicy, type ReconnectPolicyOptions, SseParser } from '@wmp/transports';
import type { BoxClient, ServedEvent } from './box-client.js';
import { MailboxError } from './errors.js';
import type { MailMessage, RejectedEvent } from './examine.js';
import { HandlerFailure, type Intake } from './intake.js';
import type { AsyncLock } from './lock.js';

export interface WatchOptions {
  /** Each new message, once; awaited before the event is acknowledged. A throw retries it after a reconnect. */
  readonly onMessage: (message: MailMessage) => void | Promise<void>;
  /** Each refused event (it is never handed over). */
  readonly onRejected?: (rejected: RejectedEvent) => void;
  /** Stream failures (each then reconnects with backoff), failed acknowledgements, handler errors. */
  readonly onError?: (error: unknown) => void;
  /** Ends the watch, like `close()`. */
  readonly signal?: AbortSignal;
  /** Backoff between reconnections; default 0.5 s doubling up to 30 s, full jitter, forever. */
  readonly reconnect?: Omit<ReconnectPolicyOptions, 'maxAttempts'>;
  /** A stream that sends nothing for this long (the box sends keep-alives every 15 s) is reopened. Default 45 s. */
  readonly idleTimeoutMs?: number;
}

/** A running watch: live streams from each of the mailbox's relays. */
export interface MailboxWatch {
  /** Closes every stream; resolves when all have ended. */
  close(): Promise<void>;
  /** Resolves when the watch has ended (closed or aborted). */
  readonly closed: Promise<void>;
}

export interface WatchContext {
  readonly intake: Intake;
  readonly lock: AsyncLock;
  readonly maxEventBytes: number;
}

/**
 * Starts one stream per relay and resolves once each has opened or failed its first attempt.
 * Each stream resumes from the relay's cursor (`Last-Event-ID`), hands events over through the
 * same intake as `fetch`, and reconnects with backoff when it ends or fails.
 */
export async function startWatch(
  clients: readonly BoxClient[],
  options: WatchOptions,
  context: WatchContext,
): Promise<MailboxWatch> {
  const stop = new AbortController();
  const onOuterAbort = () => stop.abort();
  if (options.signal?.aborted) stop.abort();
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const firsts: Promise<void>[] = [];
  const loops = clients.map((client) => {
    let first!: () => void;
    firsts.push(new Promise<void>((resolve) => (first = resolve)));
    return watchRelay(client, options, context, stop.signal, first);
  });
  const closed = Promise.all(loops).then(() => {
    options.signal?.removeEventListener('abort', onOuterAbort);
  });
  await Promise.race([Promise.all(firsts), closed]);
  return {
    closed,
    close: async () => {
      stop.abort();
      await closed;
    },
  };
}

async function watchRelay(
  client: BoxClient,
  options: WatchOptions,
  context: WatchContext,
  stop: AbortSignal,
  firstAttempt: () => void,
): Promise<void> {
  const policy = new ReconnectPolicy({
    initialDelayMs: 500,
    maxDelayMs: 30_000,
    ...options.reconnect,
    maxAttempts: Number.POSITIVE_INFINITY,
  });
  const report = (error: unknown) => {
    if (!stop.aborted) options.onError?.(error instanceof HandlerFailure ? error.cause : error);
  };
  let attempt = 0;
  while (!stop.aborted) {
    const connection = new AbortController();
    const end = () => connection.abort();
    stop.addEventListener('abort', end, { once: true });
    try {
      const ackError = await context.lock.run(() => context.intake.flushAcks(client, connection.signal));
      if (ackError) report(ackError);
      const { after } = await context.intake.state(client.origin);
      const body = await client.openStream(after, connection.signal);
      firstAttempt();
      attempt = 0;
      await pump(client, body, after, options, context, connection);
    } catch (error) {
      // An idle stream was cut with a `network` error as the reason: report that, not the abort.
      const reason: unknown = connection.signal.reason;
      report(connection.signal.aborted && reason instanceof MailboxError ? reason : error);
    } finally {
      stop.removeEventListener('abort', end);
      connection.abort();
      firstAttempt();
    }
    attempt += 1;
    // Stopping ends the wait early; the loop then sees `stop` aborted.
    await abortableSleep(policy.nextDelay(attempt), stop).catch(() => undefined);
  }
}

/** Reads one stream until it ends, fails, idles out or the connection is aborted. */
async function pump(
  client: BoxClient,
  body: ReadableStream<Uint8Array>,
  after: number,
  options: WatchOptions,
  context: WatchContext,
  connection: AbortController,
): Promise<void> {
  const idleMs = options.idleTimeoutMs ?? 45_000;
  const idleOut = () => connection.abort(new MailboxError('network', { relay: client.origin }));
  const parser = new SseParser({ maxEventChars: context.maxEventBytes + 1024 });
  const decoder = new TextDecoder('utf-8');
  const reader = body.getReader();
  let idle = setTimeout(idleOut, idleMs);
  const onAbort = () => void reader.cancel().catch(() => undefined);
  connection.signal.addEventListener('abort', onAbort, { once: true });
  const sink = {
    message: options.onMessage,
    rejected: (rejected: RejectedEvent) => options.onRejected?.(rejected),
  };
  let cursor = after;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // Aborting cancels the reader, which ends the read as `done`: the abort's reason comes first.
      if (connection.signal.aborted) throw connection.signal.reason;
      if (done) return;
      clearTimeout(idle);
      idle = setTimeout(idleOut, idleMs);
      for (const event of parser.push(decoder.decode(value, { stream: true }))) {
        const served = servedEvent(event.id, event.data, cursor, context.maxEventBytes);
        if (served === undefined) throw new MailboxError('bad_response', { relay: client.origin });
        cursor = served.seq;
        const ackError = await context.lock.run(() =>
          context.intake.take(client, [served], served.seq, sink, connection.signal),
        );
        if (ackError) options.onError?.(ackError);
      }
    }
  } finally {
    clearTimeout(idle);
    connection.signal.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}

/** An SSE event of the box: `id:` the seq (after the cursor), `data:` the event JSON. */
function servedEvent(id: string, data: string, cursor: number, maxEventBytes: number): ServedEvent | undefined {
  const seq = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : Number.NaN;
  if (!Number.isSafeInteger(seq) || seq <= cursor) return undefined;
  let value: unknown;
  try {
    value = parseStrictJson(data, { maxBytes: maxEventBytes + 64, maxDepth: 4 });
  } catch {
    // Not JSON: a refused event (shape) at this seq, not a reason to stop reading.
    value = null;
  }
  return { seq, value };
}
