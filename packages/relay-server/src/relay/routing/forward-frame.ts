import type { RoutedMessage } from './routed-message.js';

const OPEN_BRACE = 0x7b;

/** The last key `JSON.stringify` writes of `o` (own enumerable keys, in their order). */
function lastKey(o: object): string | undefined {
  let last: string | undefined;
  for (const key in o) last = key;
  return last;
}

/**
 * The frame of `message` as the forwarder sends it, written from `body` (`JSON.stringify` of
 * `message`, the text the queue holds) instead of stringifying it again: `body` itself when the
 * message goes out as it is, or `body` with `wmp.session_id` = `session` added as the last member
 * of `wmp`, byte for byte what `JSON.stringify` writes of the copy with `{ ...wmp, session_id }`.
 * Undefined when the message is not of the shape the splice relies on (`{ jsonrpc, method,
 * params }`, `wmp` the last member of `params`, no `session_id` yet): its frame is written from
 * its params then.
 */
export function forwardFrame(body: string, message: RoutedMessage, session?: string): string | undefined {
  const keys = Object.keys(message);
  if (keys.length !== 3 || keys[0] !== 'jsonrpc' || keys[1] !== 'method' || keys[2] !== 'params') return undefined;
  if (session === undefined) return body;
  const { params } = message;
  const wmp = params.wmp as unknown;
  if (lastKey(params) !== 'wmp' || typeof wmp !== 'object' || wmp === null || Array.isArray(wmp)) return undefined;
  if ('session_id' in wmp || !body.endsWith('}}}')) return undefined;
  // The brace closing `wmp` is the third from the end; `{` just before it: `wmp` is written empty.
  const end = body.length - 3;
  const comma = body.charCodeAt(end - 1) === OPEN_BRACE ? '' : ',';
  return `${body.slice(0, end)}${comma}"session_id":${JSON.stringify(session)}}}}`;
}
