/** One event to write on a `text/event-stream`. */
export interface SseOutgoingEvent {
  readonly event?: string;
  readonly id?: string | number;
  readonly data: string;
}

const LINE_BREAK = /\r\n|\r|\n/;

// A field value may not hold a line break: it would end the field early and let the rest of the
// value forge other fields. Names and ids are ours, but strip them anyway.
function oneLine(value: string): string {
  return value.replace(/[\r\n]/g, '');
}

/**
 * Serialises an event: `event:`, `id:`, then one `data:` line per line of `data`, then a blank
 * line. JSON.stringify output is a single line, so a WMP message is one `data:` line.
 */
export function formatSseEvent(event: SseOutgoingEvent): string {
  let out = '';
  if (event.event !== undefined) out += `event: ${oneLine(event.event)}\n`;
  if (event.id !== undefined) out += `id: ${oneLine(String(event.id))}\n`;
  for (const line of event.data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment line (ignored by readers; keeps proxies from timing the stream out). */
export function formatSseComment(text: string): string {
  return `: ${oneLine(text)}\n\n`;
}

/** `retry:` asks the reader to wait this long before reconnecting. */
export function formatSseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.floor(ms))}\n\n`;
}
