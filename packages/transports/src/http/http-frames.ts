import {
  isInvalidEntry,
  isRequest,
  type JsonRpcId,
  type JsonRpcMessage,
  type ParseLimits,
  parseMessage,
} from '@wmp/jsonrpc-envelope';

/** What the HTTP binding needs to know about a POST body to route its answers. */
export interface PostBody {
  /**
   * The ids of the responses the Peer will send for this body, in body order. `null` stands for
   * an error the Peer can only answer with id null (invalid JSON, an invalid single message, an
   * empty or oversized batch, an invalid batch entry without a readable id). Empty: nothing
   * will be answered (notifications and responses only), so the POST gets 202.
   */
  readonly expected: readonly (JsonRpcId | null)[];
  /** A JSON array: the answers go back as one array. */
  readonly batch: boolean;
  /** `params.wmp.session_id` of the first message that has one (transport §4.5). */
  readonly sessionId: string | undefined;
  /** The body starts with `wmp.session.create` or `wmp.session.resume`: it may open a new HTTP session. */
  readonly opensSession: boolean;
  /** The ids of the responses in the body (answers to requests of the server), when it holds nothing else. */
  readonly answers: readonly JsonRpcId[];
}

const OPENING_METHODS = new Set(['wmp.session.create', 'wmp.session.resume']);

function wmpSessionId(message: JsonRpcMessage): string | undefined {
  if (!('method' in message)) return undefined;
  const params = message.params as { wmp?: { session_id?: unknown } } | undefined;
  const id = params && !Array.isArray(params) ? params.wmp?.session_id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Classifies a POST body with the very parser the Peer runs (same limits), so that the binding
 * expects exactly the answers the Peer will give. The Peer still receives the raw bytes and
 * answers bad input itself; this never rejects anything.
 */
export function classifyPostBody(body: Uint8Array | string, limits: ParseLimits): PostBody {
  let parsed: ReturnType<typeof parseMessage>;
  try {
    parsed = parseMessage(body, limits);
  } catch {
    return { expected: [null], batch: false, sessionId: undefined, opensSession: false, answers: [] };
  }
  if (parsed.kind === 'message' || parsed.kind === 'invalid') {
    const m = parsed.message;
    // An invalid one (refused where its id is known) is answered to that id only.
    const answered = parsed.kind === 'message' ? isRequest(m) : parsed.id !== null;
    return {
      expected: answered && isRequest(m) ? [m.id] : [],
      batch: false,
      sessionId: wmpSessionId(m),
      opensSession: 'method' in m && OPENING_METHODS.has(m.method),
      answers: parsed.kind === 'message' ? answerIds([m]) : [],
    };
  }
  const expected: (JsonRpcId | null)[] = [];
  let sessionId: string | undefined;
  let answers: JsonRpcId[] | undefined = [];
  for (const entry of parsed.entries) {
    if (isInvalidEntry(entry)) {
      expected.push(entry.id);
      answers = undefined;
      continue;
    }
    if (isRequest(entry)) expected.push(entry.id);
    sessionId ??= wmpSessionId(entry);
    answers = answers === undefined ? undefined : withAnswer(answers, entry);
  }
  const first = parsed.entries[0];
  const opensSession =
    first !== undefined && !isInvalidEntry(first) && 'method' in first && OPENING_METHODS.has(first.method);
  return { expected, batch: true, sessionId, opensSession, answers: answers ?? [] };
}

/** The ids of `messages` when every one is a response with an id; else none. */
function answerIds(messages: readonly JsonRpcMessage[]): JsonRpcId[] {
  let ids: JsonRpcId[] | undefined = [];
  for (const m of messages) ids = ids === undefined ? undefined : withAnswer(ids, m);
  return ids ?? [];
}

/** `ids` with the response's id, or undefined when `message` is anything else (a body of answers only). */
function withAnswer(ids: JsonRpcId[], message: JsonRpcMessage): JsonRpcId[] | undefined {
  if ('method' in message || message.id === null) return undefined;
  ids.push(message.id);
  return ids;
}

/** True for a response (no `method`). */
export function isResponseMessage(message: JsonRpcMessage): boolean {
  return !('method' in message);
}

const HEADER_SAFE_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * The session id a create or resume response announces (`result.wmp.session_id`), if the
 * outgoing frame holds one. Only ids that can travel in a header are taken.
 */
export function announcedSessionId(frame: JsonRpcMessage | readonly JsonRpcMessage[]): string | undefined {
  const list: readonly JsonRpcMessage[] = Array.isArray(frame) ? frame : [frame as JsonRpcMessage];
  for (const m of list) {
    if (typeof m !== 'object' || m === null || !('result' in m)) continue;
    const result = m.result as { wmp?: { session_id?: unknown } } | null;
    const id = result !== null && typeof result === 'object' ? result.wmp?.session_id : undefined;
    if (typeof id === 'string' && HEADER_SAFE_ID.test(id)) return id;
  }
  return undefined;
}

/** Results that open, resume, join or authenticate a session: they carry `resumption_token` or `authenticated`. */
function establishes(result: Record<string, unknown>): boolean {
  return typeof result.resumption_token === 'string' || result.authenticated === true;
}

/**
 * The frame with the HTTP binding's session token in `result.wmp.session_token` of every result
 * that opens, resumes, joins or authenticates session `sessionId` (docs/wmp-profile.md,
 * "Bindings"): clients that read no response header learn it from the body and present it as
 * `Authorization: Bearer`.
 */
export function withSessionToken(
  frame: JsonRpcMessage | readonly JsonRpcMessage[],
  sessionId: string,
  token: string,
): JsonRpcMessage | readonly JsonRpcMessage[] {
  const one = (m: JsonRpcMessage): JsonRpcMessage => {
    if (typeof m !== 'object' || m === null || !('result' in m)) return m;
    const result = m.result as Record<string, unknown> | null;
    if (result === null || typeof result !== 'object' || Array.isArray(result) || !establishes(result)) return m;
    const wmp = result.wmp as Record<string, unknown> | undefined;
    if (wmp?.session_id !== sessionId) return m;
    return { ...m, result: { ...result, wmp: { ...wmp, session_token: token } } } as JsonRpcMessage;
  };
  return Array.isArray(frame) ? frame.map(one) : one(frame as JsonRpcMessage);
}
