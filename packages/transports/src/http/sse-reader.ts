import type { SseEvent, SseParser } from './sse-parser.js';

/**
 * Reads a `text/event-stream` body (from `fetch`) through `parser` until it ends, calling
 * `onEvent` for each event. Works where there is no EventSource (Node 20) and, unlike
 * EventSource, lets the caller send headers. Rejects on a read error or a parser bound; resolves
 * when the stream ends (the incomplete last event, if any, is discarded).
 */
export async function readSseStream(
  body: ReadableStream<Uint8Array>,
  parser: SseParser,
  onEvent: (event: SseEvent) => void,
): Promise<void> {
  const reader = body.getReader();
  // Not fatal: the SSE rules decode with replacement characters (HTML §9.2.6).
  const decoder = new TextDecoder('utf-8');
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const event of parser.push(decoder.decode(value, { stream: true }))) onEvent(event);
    }
    for (const event of parser.push(decoder.decode())) onEvent(event);
  } catch (e) {
    await reader.cancel().catch(() => undefined);
    throw e;
  } finally {
    parser.end();
    reader.releaseLock();
  }
}
