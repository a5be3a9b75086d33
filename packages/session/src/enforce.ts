import {
  CapabilityNotSupportedError,
  coreMethods,
  EncryptionRequiredError,
  InvalidRequestError,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type MethodRegistry,
  NotAuthorizedError,
  TimestampInvalidError,
  utf8Length,
  type WmpError,
  type WmpMetadata,
} from '@wmp/jsonrpc-envelope';
import type { Connection, SessionBinding } from './context.js';
import { encryptionRequiredFor } from './mls/policy.js';
import type { SessionRecord } from './session-model.js';
import type { TimestampTokenVerifier } from './timestamp-tokens.js';

/** The capabilities a message exercises: its method's, a profile flow's, `relay` for third parties. */
export function capabilitiesUsed(
  message: JsonRpcRequest | JsonRpcNotification,
  session: SessionRecord,
  flowCapability: (type: string) => string | null | undefined,
  methods: MethodRegistry = coreMethods,
): string[] {
  const used: string[] = [];
  const byMethod = methods.get(message.method)?.capability;
  if (byMethod) used.push(byMethod);
  const params = (message.params ?? {}) as Record<string, unknown>;
  if (message.method === 'wmp.flow.start' && typeof params.flow_type === 'string') {
    // A registered type names its capability (null: none beyond `flows`); an unknown type is
    // treated as a capability of its own name, so it is refused with -31005 naming it.
    const cap = flowCapability(params.flow_type);
    if (cap !== null) used.push(cap ?? params.flow_type);
  }
  if (message.method === 'wmp.message.deliver' && Array.isArray(params.to)) {
    // Delivering to someone outside the session is relaying to a third party (core §4.2.2).
    if (params.to.some((to) => !session.participants.includes(to as string))) used.push('relay');
  }
  return used;
}

/** -31005 for a capability the session did not negotiate (and the responder does not `grant` to every session). */
export function checkCapabilities(
  used: readonly string[],
  session: SessionRecord,
  granted: readonly string[] = [],
): void {
  for (const cap of used) {
    if (!(cap in session.capabilities) && !granted.includes(cap)) {
      throw new CapabilityNotSupportedError({ capability: cap });
    }
  }
}

/**
 * -31003 when the security mode wants this message encrypted and it is not (core §4.2.3, §8.4):
 * under `mls` every content method, under `mls-optional` a content method exercising a listed
 * capability. `used` are the capabilities of the message.
 */
export function checkEncryption(
  method: string,
  encrypted: boolean,
  used: readonly string[],
  session: SessionRecord,
  methods: MethodRegistry = coreMethods,
): void {
  if (encrypted) return;
  // A deliver always exercises `messaging`, which calling it does not need (its content rule names it).
  const contentCapability = methods.get(method)?.content?.capability;
  const capabilities = contentCapability === undefined ? used : [contentCapability, ...used];
  const capability = encryptionRequiredFor(session.security, method, capabilities, methods);
  if (capability !== undefined) throw new EncryptionRequiredError({ capability });
}

function clockSkew(now: number, skewSeconds: number, extra: Record<string, unknown> = {}): WmpError {
  return new TimestampInvalidError({
    reason: 'clock_skew',
    acceptable_window_seconds: skewSeconds,
    server_time: new Date(now).toISOString(),
    ...extra,
  });
}

/** -31011 when a self-asserted timestamp is outside the skew window (core §8.5.1). */
export function checkTimestamp(wmp: WmpMetadata | undefined, now: number, skewSeconds: number): void {
  if (wmp?.timestamp === undefined) return;
  const at = Date.parse(wmp.timestamp);
  if (Number.isNaN(at) || Math.abs(now - at) > skewSeconds * 1000) throw clockSkew(now, skewSeconds);
}

/**
 * Whether the time of this message is the token's (core §8.5.2): there is a token, this
 * responder trusts TSAs, and the message is in a session (a sessionless one, before any
 * authentication, costs no token verification: its `wmp.timestamp` is checked as always).
 */
export function timeFromToken(wmp: WmpMetadata | undefined, verifies: boolean, sessionless: boolean): boolean {
  return verifies && !sessionless && typeof wmp?.timestamp_token === 'string';
}

/**
 * Core §8.5.2: a verified token's time replaces the self-asserted timestamp for the skew rule
 * (-31011 `clock_skew`, `timestamp_source: 'timestamp_token'`); the self-asserted one is then
 * informational and never refuses the message.
 */
export async function checkTokenTime(
  token: string,
  content: () => Uint8Array,
  verifier: TimestampTokenVerifier,
  now: number,
  skewSeconds: number,
): Promise<void> {
  let bytes: Uint8Array;
  try {
    bytes = content();
  } catch {
    // Content that cannot be canonicalized has no content hash a token could be over.
    throw new TimestampInvalidError({ reason: 'token_imprint' });
  }
  const { genTime } = await verifier.verify(token, bytes, now);
  if (Math.abs(now - genTime) > skewSeconds * 1000) {
    throw clockSkew(now, skewSeconds, { timestamp_source: 'timestamp_token' });
  }
}

/** -31002 when the message claims a sender other than the connection's identity (sender binding). */
export function checkSender(wmp: WmpMetadata | undefined, identity: string | undefined, session: SessionRecord): void {
  const claimed = wmp?.sender;
  if (claimed === undefined) return;
  const expected = identity ?? session.initiator;
  if (claimed !== expected) throw new NotAuthorizedError({ reason: 'sender is not the authenticated identity' });
}

/**
 * A listed participant of a group session (one with participants besides its creator) may deliver
 * on it from any connection where it authenticated, without joining (docs/wmp-profile.md): the binding
 * that identity would have, for this message only (nothing is bound or stored, and no session slot
 * of the connection is taken). The identity is `wmp.sender` when the message names one, else the
 * one participant the connection proved; undefined when there is none (or several to choose from).
 */
export function participantBinding(
  connection: Connection,
  session: SessionRecord,
  sender: string | undefined,
): SessionBinding | undefined {
  if (session.participants.length < 2) return undefined;
  let found: string | undefined;
  for (const { identity } of connection.sessions.values()) {
    if (identity === undefined || !session.participants.includes(identity)) continue;
    if (sender !== undefined) {
      if (identity === sender) return { identity };
    } else if (found !== undefined && found !== identity) return undefined;
    else found = identity;
  }
  return sender === undefined && found !== undefined ? { identity: found } : undefined;
}

/** Whether `text` (a frame, or a message serialised again) is over `max` UTF-8 bytes; counted only when it can be. */
function bytesOver(text: string | Uint8Array, max: number): boolean {
  if (typeof text !== 'string') return text.byteLength > max;
  // A UTF-16 unit is 1 to 3 UTF-8 bytes: most texts are decided by their length alone.
  return text.length > max || (text.length * 3 > max && utf8Length(text, max) > max);
}

/**
 * -32600 `message too large` (with `max_size`) for a deliver over the `messaging.max_size` its
 * session negotiated: the message's UTF-8 bytes as sent, the same measure as the transport's own
 * frame limit (decision 0360). A frame of one message is that message; an entry of a batch whose
 * whole frame is over the limit is serialised again to be measured.
 */
export function checkMessageSize(
  session: SessionRecord,
  message: JsonRpcRequest | JsonRpcNotification,
  frame: string | Uint8Array | undefined,
  batched: boolean | undefined,
): void {
  const max = (session.capabilities.messaging as { max_size?: unknown } | undefined)?.max_size;
  if (typeof max !== 'number') return;
  if (frame !== undefined && !bytesOver(frame, max)) return;
  const alone = frame !== undefined && batched !== true;
  if (alone || bytesOver(JSON.stringify(message), max)) {
    throw new InvalidRequestError({ reason: 'message too large', max_size: max });
  }
}

/** How many request ids of a session each connection remembers. */
export const MAX_RECENT_IDS = 1024;

/** Refuses a request id already used in this session on this connection (bounded: `MAX_RECENT_IDS`). */
export function checkDuplicateId(recent: Set<string | number>, id: string | number | undefined): void {
  if (id === undefined) return;
  if (recent.has(id)) throw new InvalidRequestError({ reason: 'duplicate request id' });
  recent.add(id);
}
