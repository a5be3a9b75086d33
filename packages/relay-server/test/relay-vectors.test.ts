// The WMP vectors (vectors/wmp/vectors) against a real relay over WebSocket, where they apply to a
// relay. The vectors' identities (x509:san:dns:alice.example.com, ...) cannot sign a challenge, so
// the relay is given an authenticator for opaque bearer tokens the test issues per identity (real
// authentication through the engine's authenticator interface); every vector runs in a session
// authenticated as its `wmp.sender`, with the server-issued session id put where it says `ses-...`.
import { once } from 'node:events';
import { randomBytes, toHex } from '@wmp/jcs-signing';
import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import type { Authenticator } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadVectors, matches, type RawClient, rawClientFrom } from '../../session/test/vector-harness.js';
import { relayTestbed } from './fixtures/relay-clients.js';

/**
 * The vectors a relay answers, with why. A relay is a responder for session set-up, delivery
 * (which it routes to the other participants), acknowledgements, closing and the generic errors.
 */
const APPLIES: Record<string, string> = {
  'session-create-basic-tls': 'session set-up at the relay: a TLS session with messaging',
  'message-deliver-plaintext':
    'routed to the other participant (bob receives it, relay_chain appended); its example timestamp is sent as now',
  'message-deliver-encrypted':
    'routed unread: the relay orders no MLS group for this session, so the ciphertext is forwarded as it is',
  'message-ack-received': 'an acknowledgement of an id the relay does not hold: no answer, nothing removed',
  'message-deliver-with-signature':
    'no answer (a notification); our profile refuses the object-form signature (DESIGN §5), so nothing is routed',
  'error-session-not-found': 'session lookup',
  'error-encryption-required':
    'security-mode enforcement: relaying to a non-participant is the encrypted `relay` capability',
  'error-method-not-found': 'dispatch',
  'error-capability-not-supported':
    'the code applies; `data.capability` names `flows`, which a relay never negotiates, before the flow type',
  'session-close-complete': 'closing a relay session (a later call on it is -31000)',
  'interop-method-not-found': 'dispatch without a session',
  'interop-notification-no-response': 'a deliver notification is routed and never answered',
};

/** The vectors that do not apply to a relay, with why. */
const NOT_APPLICABLE: Record<string, string> = {
  'session-create-mls':
    'expects `flows` and an `mls_group_info`: a relay runs no flows and is no member of any MLS group (it never holds keys)',
  'session-create-mls-optional': 'expects `mls_group_info`, which only a group member can produce',
  'capability-update-add-relay': 'expects `flows` and `mls_group_info` (see above)',
  'flow-approval-full-lifecycle': 'flows are end-to-end between participants; the relay offers no `flows` capability',
  'flow-sign-generate-proof': 'flows (see above)',
  'resolve-vctm': '`wmp.resolve` is answered by a service, not a relay (no resolvers)',
  'resolve-not-found': '`wmp.resolve` (see above)',
  'resolve-unsupported-type': '`wmp.resolve` (see above)',
  'interop-echo-resolve': '`wmp.resolve` (see above)',
  'interop-auth-reject': "configures the test peer's own authorize hook, not a relay behaviour",
  'interop-validation-reject': "configures the test peer's own validate hook",
  'interop-handler-error': "configures the test peer's own resolver",
};

const FILES = [
  'session-create.json',
  'session-lifecycle.json',
  'message-deliver.json',
  'resolve.json',
  'errors.json',
  'flow-lifecycle.json',
  'interop.json',
];
const vectors = FILES.flatMap((file) => loadVectors(file).map((v) => ({ file, ...v })));

const ALICE = 'x509:san:dns:alice.example.com';
const BOB = 'x509:san:dns:bob.example.com';
const tokens = new Map<string, string>();
const tokenOf = (identity: string) => {
  if (!tokens.has(identity)) tokens.set(identity, toHex(randomBytes(16)));
  return tokens.get(identity)!;
};

/** Opaque bearer tokens issued by this test, one per identity; the token must match `wmp.sender`. */
const tokenAuthenticator: Authenticator = {
  needsChallenge: false,
  async authenticate({ auth, sender }) {
    const identity = [...tokens].find(([, t]) => t === auth.token)?.[0];
    if (identity === undefined || (sender !== undefined && sender !== identity)) {
      throw new NotAuthorizedError({ reason: 'unknown token' });
    }
    return identity;
  },
};

const testbed = relayTestbed();

async function connect(url: string): Promise<RawClient> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/wmp`, 'wmp.v1');
  await once(ws, 'open');
  const client = rawClientFrom(
    (m) => new Promise<void>((resolve, reject) => ws.send(JSON.stringify(m), (e) => (e ? reject(e) : resolve()))),
    async () => {
      ws.close();
      if (ws.readyState !== WebSocket.CLOSED) await once(ws, 'close');
    },
  );
  ws.on('message', (data) => client.push(String(data)));
  return client;
}

const isAnswer = (id: unknown) => (m: Record<string, any>) => m.id === id && ('result' in m || 'error' in m);
let ids = 0;

async function call(client: RawClient, method: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const id = `ctx-${++ids}`;
  await client.send({ jsonrpc: '2.0', id, method, params });
  return client.next(isAnswer(id));
}

interface Context {
  readonly capabilities?: object;
  readonly security?: object;
}

const CONTEXTS: Record<string, Context> = {
  'ses-mls-opt-001': {
    capabilities: { messaging: { max_size: 65536 }, relay: { destinations: ['*'] } },
    security: { mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['relay'] },
  },
};
const DEFAULT_CONTEXT: Context = { capabilities: { messaging: { max_size: 65536 }, relay: {}, offline: {} } };

/** A group session of `sender` with Bob, authenticated inline; its real id. */
async function openSession(client: RawClient, sender: string, context: Context): Promise<string> {
  const r = await call(client, 'wmp.session.create', {
    wmp: { version: '0.1', sender },
    participants: [BOB],
    auth: { type: 'bearer', token: tokenOf(sender) },
    capabilities_offered: context.capabilities,
    ...(context.security ? { security: context.security } : {}),
  });
  expect(r.result?.wmp?.session_id, JSON.stringify(r)).toMatch(/^ses-/);
  return r.result.wmp.session_id;
}

/** Bob on his own connection, joined to `sessionId`; what he receives is in his `received`. */
async function bobJoins(url: string, sessionId: string): Promise<RawClient> {
  const bob = await connect(url);
  await openSession(bob, BOB, DEFAULT_CONTEXT);
  const joined = await call(bob, 'wmp.session.join', { wmp: { version: '0.1', sender: BOB }, session_id: sessionId });
  expect(joined.error).toBeUndefined();
  return bob;
}

function substitute<T>(value: T, from: string, to: string): T {
  return JSON.parse(JSON.stringify(value).split(`"${from}"`).join(`"${to}"`));
}

/** The relay still answers on this connection, and nothing else came for `id`. */
async function probe(client: RawClient, id: unknown): Promise<void> {
  const answer = await call(client, 'wmp.nonexistent', { wmp: { version: '0.1' } });
  expect(answer.error.code).toBe(-32601);
  if (id !== undefined) expect(client.received.filter((m) => m.id === id)).toEqual([]);
  expect(client.received.filter((m) => 'error' in m && m.id === null)).toEqual([]);
}

async function run(url: string, vector: (typeof vectors)[number]): Promise<void> {
  const client = await connect(url);
  const open: RawClient[] = [client];
  try {
    let input = vector.input;
    let expected = vector.expected_response ?? vector.expected_error;
    const wmp = input.params?.wmp ?? {};
    const method: string = input.method;
    const vectorSession: string | undefined = wmp.session_id;
    let bob: RawClient | undefined;
    if (method !== 'wmp.session.create' && vectorSession !== undefined && vectorSession !== 'ses-nonexistent') {
      const sender = wmp.sender ?? ALICE;
      const real = await openSession(client, sender, CONTEXTS[vectorSession] ?? DEFAULT_CONTEXT);
      input = substitute(input, vectorSession, real);
      // The vectors' timestamps are examples from their writing; the relay holds senders to a
      // 30 s skew (core §8.5.1), so they are sent as now.
      if (input.params.wmp.timestamp !== undefined) input.params.wmp.timestamp = new Date().toISOString();
      if (expected) expected = substitute(expected, vectorSession, real);
      if (method === 'wmp.message.deliver' && sender !== BOB) {
        bob = await bobJoins(url, real);
        open.push(bob);
      }
    }
    await client.send(input);

    if (vector.id === 'error-capability-not-supported') {
      const answer = await client.next(isAnswer(input.id));
      expect(answer.error).toMatchObject({
        code: -31005,
        message: 'Capability not supported',
        data: { capability: 'flows' },
      });
      return;
    }
    if (expected && 'id' in input) {
      const answer = await client.next(isAnswer(input.id));
      if (vector.expected_error) {
        expect(answer.error?.code).toBe(expected.error.code);
        expect(answer.error.message).toBe(expected.error.message);
        if (expected.error.data !== undefined) expect(answer.error.data).toEqual(expected.error.data);
      } else {
        expect(matches(expected, answer, false), JSON.stringify({ expected, answer })).toBe(true);
      }
      return;
    }
    // A notification: never answered; the connection still serves.
    await probe(client, input.id);
    if (bob) {
      const routed = vector.id !== 'message-deliver-with-signature';
      if (routed) {
        const got = await bob.next((m) => m.method === 'wmp.message.deliver');
        const { wmp: sent, ...content } = input.params;
        const { wmp: meta, ...received } = got.params;
        expect(received).toEqual(content);
        expect(meta).toMatchObject({ sender: sent.sender ?? ALICE, session_id: sent.session_id });
        expect(meta.relay_chain).toHaveLength(1);
        if (sent.encrypted) expect(meta).toMatchObject({ encrypted: true, epoch: sent.epoch });
      } else {
        await probe(bob, undefined);
        expect(bob.received.filter((m) => m.method === 'wmp.message.deliver')).toEqual([]);
      }
    }
    if (vector.id === 'session-close-complete') {
      const after = await call(client, 'wmp.message.ack', { ...input.params, message_ids: ['x'], status: 'received' });
      expect(after.error.code).toBe(-31000);
    }
  } finally {
    for (const c of open) await c.close();
  }
}

describe('WMP vectors against the relay over WebSocket', () => {
  it('classifies every vector: it applies to a relay, or why not', () => {
    const classified = new Set([...Object.keys(APPLIES), ...Object.keys(NOT_APPLICABLE)]);
    expect(vectors.map((v) => v.id).filter((id) => !classified.has(id))).toEqual([]);
    expect(Object.keys(APPLIES).filter((id) => Object.hasOwn(NOT_APPLICABLE, id))).toEqual([]);
    expect(Object.keys(APPLIES).every((id) => vectors.some((v) => v.id === id))).toBe(true);
  });

  for (const vector of vectors.filter((v) => Object.hasOwn(APPLIES, v.id))) {
    it(`${vector.file} ${vector.id}`, async () => {
      const url = await testbed.setup({ authenticators: { bearer: tokenAuthenticator } });
      await run(url, vector);
    });
  }
});
