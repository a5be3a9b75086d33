// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import {
  createRequest,
  createResponse,
  DEFAULT_PARSE_LIMITS,
  isNotification,
  isRequest,
  type JsonRpcId,
  type JsonRpcResponse,
  Method,
  MethodNotFoundError,
  MIN_MESSAGE_BYTES,
  type ParseLimits,
  parseMessage,
  parseSingleMessage,
  toWmpError,
  validateParams,
  validateResult,
} from '@wmp/jsonrpc-envelope';

// 1. Receiving: a wmp.message.deliver notification, as one text frame from a transport.
const frame = JSON.stringify({
  jsonrpc: '2.0',
  method: 'wmp.message.deliver',
  params: {
    wmp: { version: '0.1', session_id: 'ses-4f9a2c7d', sender: 'did:example:alice', timestamp: '2026-11-29T12:00:00Z' },
    to: ['did:example:bob'],
    content_type: 'text/plain',
    body: 'Hello Bob',
  },
});
const parsed = parseMessage(frame);
if (parsed.kind !== 'message' || !isNotification(parsed.message)) throw new Error('expected one notification');
const deliver = validateParams(Method.MessageDeliver, parsed.message.params); // typed params
console.log(`${parsed.message.method} from ${deliver.wmp.sender} to ${deliver.to?.join(', ')}: ${deliver.body}`);

// 2. Serving: one frame in, one response out (a notification gets none). Every failure is a
// WmpError with a canonical code and message, answered with the request id when one is known.
function answer(input: string, limits: ParseLimits = DEFAULT_PARSE_LIMITS): JsonRpcResponse | undefined {
  let id: JsonRpcId | null = null;
  try {
    const message = parseSingleMessage(input, limits);
    if (!isRequest(message)) return undefined;
    id = message.id;
    if (message.method !== Method.MessageDeliver) throw new MethodNotFoundError();
    validateParams(message.method, message.params);
    return createResponse(id, { message_id: 'msg-0001', status: 'queued' });
  } catch (e) {
    // A WmpError goes out as is; anything else becomes -32603 without internals (toWmpError).
    return toWmpError(e).toResponse(id);
  }
}

const request = createRequest('req-1', Method.MessageDeliver, {
  wmp: { version: '0.1', session_id: 'ses-4f9a2c7d', sender: 'did:example:alice' },
  to: ['did:example:bob'],
  body: { text: 'Invoice attached', amount: 42 },
});
const ok = answer(JSON.stringify(request));
console.log('ok:', JSON.stringify(ok));
if (ok && 'result' in ok) console.log('result status:', validateResult(Method.MessageDeliver, ok.result).status);

// A duplicate key is refused before anything reads the message, so the id is unknown (null).
const duplicate =
  '{"jsonrpc":"2.0","id":"req-2","method":"wmp.message.deliver","params":{"wmp":{"version":"0.1"},"body":"a","body":"b"}}';
console.log('duplicate key:', JSON.stringify(answer(duplicate)));

// A frame over the limit (here the 64 KiB every transport must accept) never reaches JSON.parse.
const big = JSON.stringify({ ...request, id: 'req-3', params: { ...request.params, body: 'x'.repeat(70_000) } });
const tooLarge = answer(big, { ...DEFAULT_PARSE_LIMITS, maxBytes: MIN_MESSAGE_BYTES });
console.log('too large:', JSON.stringify(tooLarge));

// Well-formed JSON-RPC with bad params is -32602, answered with the request's id.
const noWmp = answer(JSON.stringify(createRequest('req-4', Method.MessageDeliver, { body: 'no metadata' })));
console.log('invalid params:', JSON.stringify(noWmp));
console.log('unknown method:', JSON.stringify(answer(JSON.stringify(createRequest(5, 'wmp.message.unknown', {})))));
console.log('notification answered:', answer(frame) !== undefined);
