// The WMP spec vectors (vectors/wmp/vectors) that apply to a relay, against `wmp-relay` started
// from its sources, over WebSocket and HTTP+SSE, sent by spec-only clients (fixtures/spec-client.ts:
// nothing of ours on the client side). The vectors' identities (x509:san:dns:alice.example.com, ...)
// cannot sign a challenge, so each stands for a did:key identity made here, substituted throughout
// input and expectation; every party authenticates with a signed challenge. Each vector runs on a
// connection that first opened its hop session with the relay (create, authenticate, register:
// transport §6.5), then, where the vector names a session, on a relay-hosted session of the sender
// with the other party (`participants`), whose real id is put where the vector says `ses-...`.
// The recipient is a registered spec-only client that never calls our `wmp.session.join`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALICE,
  BOB,
  loadVectors,
  matches,
  substitute,
  substituteAll,
  VECTOR_FILES,
  VECTOR_IDENTITIES,
  withCurrentTimestamps,
} from '../../../packages/session/test/vector-data.js';
import { type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';
import {
  type Binding,
  callUntilRefused,
  type Message,
  openHop,
  SpecClient,
  SpecIdentity,
} from './fixtures/spec-client.js';

/**
 * The vectors a relay answers, with why. A relay is a responder for session set-up, delivery
 * (which it routes to the other participants), acknowledgements, closing and the generic errors.
 */
const APPLIES: Record<string, string> = {
  'session-create-basic-tls': 'session set-up at the relay: a TLS session with messaging; its challenge is answered',
  'message-deliver-plaintext':
    'routed to the other participant (bob receives it, relay_chain appended); its example timestamp is sent as now',
  'message-deliver-encrypted':
    'routed unread: the relay orders no MLS group for this session, so the ciphertext is forwarded as it is',
  'message-ack-received': 'an acknowledgement of an id the relay does not hold: no answer',
  'message-deliver-with-signature':
    'no answer (a notification); our profile refuses the object-form signature (decision 0015), so nothing is routed',
  'error-session-not-found': 'session lookup, on a connection with no session',
  'error-encryption-required':
    'security-mode enforcement: relaying to a non-participant is the encrypted `relay` capability',
  'error-method-not-found': 'dispatch',
  'error-capability-not-supported':
    'the code and message apply; `data.capability` names `flows`, which a relay never negotiates (DATA_DIFFERENCES)',
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
  'resolve-vctm':
    'the relay resolves `endpoint`, and `vctm` only from the type URL itself through the guarded fetcher (not configured here): the vector expects a document only it holds',
  'resolve-not-found': '`vctm` (see above)',
  'resolve-unsupported-type':
    "the hop sessions here negotiate no `resolve` (see assertion-policy.test.ts for the relay's resolve)",
  'interop-echo-resolve': '`vctm` (see above)',
  'interop-auth-reject': "configures the test peer's own authorize hook, not a relay behaviour",
  'interop-validation-reject': "configures the test peer's own validate hook",
  'interop-handler-error': "configures the test peer's own resolver",
};

/** Error data that differs from a vector's on purpose: ours, and why (the test checks it differs). */
const DATA_DIFFERENCES: Record<string, { ours: unknown; why: string }> = {
  'error-capability-not-supported': {
    ours: { capability: 'flows' },
    why: 'a relay negotiates no `flows`, so the flow type is never looked at: the missing capability is `flows` itself',
  },
};

/** Vectors on a connection with no session at all (no hop session first). */
const SESSIONLESS = new Set(['error-session-not-found', 'interop-method-not-found']);

const vectors = VECTOR_FILES.flatMap((file) => loadVectors(file).map((v) => ({ file, ...v })));

interface Context {
  readonly capabilities: object;
  readonly security?: object;
}

const CONTEXTS: Record<string, Context> = {
  'ses-mls-opt-001': {
    capabilities: { messaging: { max_size: 65536 }, relay: { destinations: ['*'] } },
    security: { mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['relay'] },
  },
};
const DEFAULT_CONTEXT: Context = { capabilities: { messaging: { max_size: 65536 }, relay: {}, offline: {} } };

const isAnswer = (m: Message) => 'id' in m && ('result' in m || 'error' in m);

interface Mode {
  readonly name: string;
  readonly binding: Binding;
  readonly args: readonly string[];
  readonly authorization: 'bearer' | 'none';
}

const MODES: readonly Mode[] = [
  { name: 'WebSocket', binding: 'ws', args: [], authorization: 'none' },
  { name: 'HTTP+SSE (Authorization: Bearer from the results)', binding: 'http', args: [], authorization: 'bearer' },
  {
    name: 'HTTP+SSE (--http-session-id-binding)',
    binding: 'http',
    args: ['--http-session-id-binding'],
    authorization: 'none',
  },
];

describe('WMP vectors against wmp-relay', () => {
  it('classifies every vector: it applies to a relay, or why not', () => {
    const classified = new Set([...Object.keys(APPLIES), ...Object.keys(NOT_APPLICABLE)]);
    expect(vectors.map((v) => v.id).filter((id) => !classified.has(id))).toEqual([]);
    expect(Object.keys(APPLIES).filter((id) => Object.hasOwn(NOT_APPLICABLE, id))).toEqual([]);
    expect(Object.keys(APPLIES).every((id) => vectors.some((v) => v.id === id))).toBe(true);
    expect(Object.keys(APPLIES)).toHaveLength(12);
  });
});

for (const mode of MODES) {
  describe(`WMP vectors against wmp-relay over ${mode.name}`, () => {
    let relay: RelayProcess | undefined;
    const identities = new Map(VECTOR_IDENTITIES.map((id) => [id as string, SpecIdentity.generate()]));
    const names = new Map([...identities].map(([id, identity]) => [id, identity.did]));

    beforeAll(async () => {
      relay = await startRelayProcess(['--ephemeral', '--port', '0', ...mode.args]);
    }, 30_000);
    afterAll(async () => {
      if (relay && relay.child.exitCode === null) {
        relay.child.kill('SIGTERM');
        await relay.exited;
      }
    });

    const connect = (vectorIdentity: string) =>
      SpecClient.connect({
        origin: relay!.url,
        binding: mode.binding,
        authorization: mode.authorization,
        identity: identities.get(vectorIdentity)!,
      });

    /** A relay-hosted session of `c` with `other`, authenticated; its real id. */
    async function openSession(c: SpecClient, other: string, context: Context): Promise<string> {
      const r = await c.call('wmp.session.create', {
        wmp: { version: '0.1', sender: c.did },
        participants: [other],
        capabilities_offered: context.capabilities,
        ...(context.security ? { security: context.security } : {}),
      });
      expect(r.result?.wmp?.session_id, JSON.stringify(r)).toMatch(/^ses-/);
      const a = await c.authenticate(r.result.wmp.session_id, r.result.challenge);
      expect(a.result?.authenticated, JSON.stringify(a)).toBe(true);
      return r.result.wmp.session_id;
    }

    /**
     * After a notification: a probe request is answered, and no JSON-RPC answer but the probe's
     * came on the connection since the notification was sent (statuses may).
     */
    async function probe(c: SpecClient, from: number): Promise<void> {
      const answer = await c.call('wmp.nonexistent', { wmp: { version: '0.1' } });
      expect(answer.error?.code).toBe(-32601);
      expect(c.received.slice(from).filter(isAnswer)).toEqual([answer]);
    }

    async function run(vector: (typeof vectors)[number]): Promise<void> {
      const open: SpecClient[] = [];
      try {
        let input = withCurrentTimestamps(substituteAll(vector.input, names));
        let expected = substituteAll(vector.expected_response ?? vector.expected_error, names);
        const wmp = input.params?.wmp ?? {};
        const senderName: string = vector.input.params?.wmp?.sender ?? ALICE;
        const client = await connect(senderName);
        open.push(client);
        if (!SESSIONLESS.has(vector.id)) await openHop(client);
        const vectorSession: string | undefined = wmp.session_id;
        let bob: SpecClient | undefined;
        if (input.method !== 'wmp.session.create' && vectorSession !== undefined && !SESSIONLESS.has(vector.id)) {
          const other = names.get(senderName === BOB ? ALICE : BOB)!;
          const real = await openSession(client, other, CONTEXTS[vectorSession] ?? DEFAULT_CONTEXT);
          input = substitute(input, vectorSession, real);
          expected = substitute(expected, vectorSession, real);
          if (input.method === 'wmp.message.deliver' && senderName !== BOB) {
            bob = await connect(BOB);
            open.push(bob);
            await openHop(bob);
          }
        }
        const from = client.received.length;
        await client.send(input);

        if ('id' in input) {
          const answer = await client.next((m) => m.id === input.id && isAnswer(m));
          if (vector.expected_error) {
            expect(answer.error?.code, JSON.stringify(answer)).toBe(expected.error.code);
            expect(answer.error.message).toBe(expected.error.message);
            const differs = DATA_DIFFERENCES[vector.id];
            if (differs) expect(expected.error.data).not.toEqual(differs.ours);
            const data = differs ? differs.ours : expected.error.data;
            if (data !== undefined) expect(answer.error.data).toEqual(data);
          } else {
            expect(matches(expected, answer, false), JSON.stringify({ expected, answer })).toBe(true);
          }
          if (input.method === 'wmp.session.create') {
            // The relay's challenge is real: answering it authenticates the new session.
            const a = await client.authenticate(answer.result.wmp.session_id, answer.result.challenge);
            expect(a.result?.authenticated, JSON.stringify(a)).toBe(true);
          }
          return;
        }

        if (bob) {
          // Routed or not, a later message on the same session is the marker bob must get, after
          // the vector's if it was routed, and without it if it was not.
          const marker = `marker-${Math.random().toString(36).slice(2)}`;
          await client.deliver(input.params.wmp.session_id, [bob.did], { text: marker });
          await bob.next((m) => m.method === 'wmp.message.deliver' && m.params?.body?.text === marker);
          // Bob never acknowledges (as the public libraries): what other vectors sent him on their
          // sessions is replayed when he registers again. Only this vector's session counts.
          const session = input.params.wmp.session_id;
          const got = bob.all(
            (m) =>
              m.method === 'wmp.message.deliver' &&
              m.params?.wmp?.session_id === session &&
              m.params?.body?.text !== marker,
          );
          if (vector.id === 'message-deliver-with-signature') {
            expect(got).toEqual([]);
          } else {
            expect(got).toHaveLength(1);
            const { wmp: sent, ...content } = input.params;
            const { wmp: meta, ...received } = got[0]!.params;
            expect(received).toEqual(content);
            expect(meta).toMatchObject({ sender: client.did, session_id: sent.session_id });
            expect(meta.relay_chain).toHaveLength(1);
            if (sent.encrypted) expect(meta).toMatchObject({ encrypted: true, epoch: sent.epoch });
          }
        }
        await probe(client, from);
        if (vector.id === 'session-close-complete') {
          // A close is a notification: repeat a call until the relay has handled it (5 s at most).
          const after = await callUntilRefused(client, input.params.wmp.session_id);
          expect(after.error?.code, JSON.stringify(after)).toBe(-31000);
        }
      } finally {
        for (const c of open) await c.close();
      }
    }

    for (const vector of vectors.filter((v) => Object.hasOwn(APPLIES, v.id))) {
      it(`${vector.file} ${vector.id}`, () => run(vector));
    }
  });
}
