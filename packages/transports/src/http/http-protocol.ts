/** Names the HTTP session of a POST or GET (transport §4.5; go-wmp and wmp-js send it). */
export const WMP_SESSION_ID_HEADER = 'Wmp-Session-Id';
/**
 * The secret that binds later requests to the HTTP session, returned on the reply that created
 * it. A session id alone is never enough (docs/architecture.md, "Sender binding"); clients send
 * this header back, or the same value as `Authorization: Bearer`.
 */
export const WMP_SESSION_TOKEN_HEADER = 'Wmp-Session-Token';

/** The default endpoint path (transport §3.1, §4.1). */
export const DEFAULT_WMP_PATH = '/wmp';

/** The SSE event name of WMP messages (transport §4.3). */
export const WMP_SSE_EVENT = 'wmp';

/** True when an `Accept` header lists `text/event-stream` (with a non-zero q). */
export function acceptsEventStream(accept: string | null | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    if (type?.trim() !== 'text/event-stream') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** True for `application/json` and `application/*+json`, with or without parameters. */
export function isJsonContentType(type: string | null | undefined): boolean {
  if (!type) return false;
  const essence = type.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json' || (essence.startsWith('application/') && essence.endsWith('+json'));
}

/** Parses an SSE event id of ours (`<n>`, or go-wmp's `evt-<n>`); undefined for anything else. */
export function parseEventId(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const m = /^(?:evt-)?(\d{1,15})$/.exec(value.trim());
  return m ? Number(m[1]) : undefined;
}
