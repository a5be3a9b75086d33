import { fromUtf8 } from '@wmp/jcs-signing';
import { DEFAULT_PARSE_LIMITS, type JsonRpcMessage, parseSingleMessage } from '@wmp/jsonrpc-envelope';
import { OhanOpenError } from './errors.js';
import { openPayload } from './seal.js';

export interface OpenedEvent {
  /** The envelope's JSON text exactly as sealed. */
  readonly envelope: string;
  /** The envelope parsed by @wmp/jsonrpc-envelope (strict: no duplicate keys, bounded depth). */
  readonly message: JsonRpcMessage;
}

/**
 * Opens an event with the recipient's X25519 secret (the private half of its card's `enc`).
 * Does not check the id, signature, stamp or times: run `verifyEvent` first.
 * Throws `OhanOpenError` with reason decrypt, small_order, padding or envelope.
 */
export function openEvent(
  event: { readonly to: string; readonly epk: string; readonly payload: string },
  encPrivateKey: Uint8Array,
): OpenedEvent {
  if (
    event === null ||
    typeof event !== 'object' ||
    typeof event.to !== 'string' ||
    typeof event.epk !== 'string' ||
    typeof event.payload !== 'string' ||
    !(encPrivateKey instanceof Uint8Array) ||
    encPrivateKey.length !== 32
  ) {
    throw new OhanOpenError('decrypt');
  }
  const bytes = openPayload(event, encPrivateKey);
  let envelope: string;
  let message: JsonRpcMessage;
  try {
    envelope = fromUtf8(bytes);
    message = parseSingleMessage(envelope, DEFAULT_PARSE_LIMITS);
  } catch {
    throw new OhanOpenError('envelope');
  }
  return { envelope, message };
}
