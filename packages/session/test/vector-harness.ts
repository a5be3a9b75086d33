// Drives the WMP spec vectors (vectors/wmp/vectors) through a real WmpServer over any binding, as a
// deployment runs it: authentication required (signed challenges by did:key identities the harness
// makes, standing in for the vectors' x509 and did:web names), real MLS (@wmp/mls-bridge), and flow
// and resolve answers computed by the harness's own handlers, never copied from the vectors'
// expected outputs. Each vector runs in the session context it implies: the harness opens and
// authenticates that session first and puts its real (server-issued) id where the vector says
// `ses-...`. Where a vector's expectation cannot be met without echoing it, or where we decided
// otherwise (docs/wmp-profile.md), the tables below say so and the test checks that the difference
// is real.
import { generateKeypair, type Keypair, signChallenge, verifyEd25519 } from '@wmp/jcs-signing';
import { type JsonRpcMessage, rfc3339, WmpError } from '@wmp/jsonrpc-envelope';
import { inspectMessage } from '@wmp/mls-bridge';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  builtInFlowTypes,
  FlowManager,
  type FlowType,
  proofSignerOf,
  signFlow,
  WmpServer,
  type WmpServerOptions,
} from '../src/index.js';
import { responderMls } from './mls-fixtures.js';
import {
  ALICE,
  BOB,
  isRfc3339,
  loadVectors,
  matches,
  substitute,
  substituteAll,
  VECTOR_FILES,
  VECTOR_IDENTITIES,
  type Vector,
  withCurrentTimestamps,
} from './vector-data.js';

export { loadVectors, matches, type Vector };

/** A client connection that sends raw vector messages and collects every frame it receives. */
export interface RawClient {
  send(message: unknown): Promise<void>;
  /** Waits for the first received message matching `predicate` (default: any), up to `ms`. */
  next(predicate?: (m: Record<string, any>) => boolean, ms?: number): Promise<Record<string, any>>;
  /** Messages received so far. */
  readonly received: Record<string, any>[];
  close(): Promise<void>;
}

/** Opens a client connection to `server` over some binding. */
export type ConnectRaw = (server: WmpServer) => Promise<RawClient>;

/** The vectors' identities as did:key identities of this run: a signed challenge needs a key. */
export class Identities {
  readonly #keys = new Map<string, Keypair>();
  readonly map = new Map<string, string>();

  constructor() {
    for (const id of VECTOR_IDENTITIES) {
      const keypair = generateKeypair();
      this.#keys.set(id, keypair);
      this.map.set(id, keypair.did);
    }
  }

  keypair(vectorIdentity: string): Keypair {
    const k = this.#keys.get(vectorIdentity) ?? [...this.#keys.values()].find((p) => p.did === vectorIdentity);
    if (!k) throw new Error(`no identity for ${vectorIdentity}`);
    return k;
  }

  did(vectorIdentity: string): string {
    return this.keypair(vectorIdentity).did;
  }

  /** `value` with every vector identity replaced by its did:key. */
  apply<T>(value: T): T {
    return substituteAll(value, this.map);
  }
}

/** What the server's hooks saw, per session: how the harness knows a notification was taken. */
export interface Seen {
  readonly kind: 'deliver' | 'ack' | 'refused' | 'ended';
  readonly session: string | undefined;
  readonly params?: unknown;
  readonly method?: string;
  readonly code?: number;
}

export class Recorder {
  readonly seen: Seen[] = [];
  readonly #waiters = new Set<{ predicate: (s: Seen) => boolean; resolve: (s: Seen) => void }>();

  record(s: Seen): void {
    this.seen.push(s);
    for (const w of [...this.#waiters]) {
      if (w.predicate(s)) {
        this.#waiters.delete(w);
        w.resolve(s);
      }
    }
  }

  next(predicate: (s: Seen) => boolean, ms = 3000): Promise<Seen> {
    const found = this.seen.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const w = {
        predicate,
        resolve: (s: Seen) => {
          clearTimeout(timer);
          resolve(s);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(w);
        reject(new Error(`the server's hooks saw nothing matching within ${ms} ms; saw ${JSON.stringify(this.seen)}`));
      }, ms);
      this.#waiters.add(w);
    });
  }
}

export interface VectorServer {
  readonly server: WmpServer;
  readonly recorder: Recorder;
  /** The responder's own key: it signs the proofs of `sign` flows. */
  readonly key: Keypair;
}

/**
 * The harness's own VCTM registry (not the vectors' data): `resolve-vctm` expects a document only
 * the vector holds, so that part of it is excluded (see PARTIAL) and this one is checked instead.
 */
export const REGISTRY: Readonly<
  Record<string, { metadata: unknown; trust_info: { trusted: boolean; source: string } }>
> = {
  'https://credentials.example.com/identity': {
    metadata: {
      vct: 'https://credentials.example.com/identity',
      name: 'Harness identity credential',
      claims: [{ path: ['given_name'], display: { name: 'Given name' } }],
    },
    trust_info: { trusted: true, source: 'harness-registry' },
  },
};

/** A WmpServer as deployed: authentication required, real MLS, flows and resolvers of its own. */
export async function vectorServer(extra: WmpServerOptions = {}): Promise<VectorServer> {
  const recorder = new Recorder();
  const key = generateKeypair();
  const mls = await responderMls();
  // The built-in flows, as a deployment runs them: the approval reviewed by the other participant
  // (its `wmp.flow.action`), the proof of a `sign` made by this responder (it consents to all).
  const types: Record<string, FlowType> = {
    approval: builtInFlowTypes.approval!,
    sign: signFlow({ consent: () => true, signer: proofSignerOf({ id: key.did, signer: key }) }),
    oid4vci: { capability: 'oid4vci' },
  };
  const server = new WmpServer({
    capabilities: {
      messaging: { max_size: 1024 * 1024 },
      flows: { max_concurrent: 16 },
      relay: { destinations: ['*'] },
      resolve: { supported_types: ['vctm'] },
    },
    mls,
    flows: new FlowManager({ types }),
    resolvers: {
      vctm: (uri) => REGISTRY[uri] ?? null,
    },
    ...extra,
    // The recorder sees every hook first; a test's own hooks (`extra.hooks`) run after it.
    hooks: {
      ...extra.hooks,
      deliver: (params, ctx) => {
        recorder.record({ kind: 'deliver', session: ctx.session?.id, params });
        return extra.hooks?.deliver?.(params, ctx);
      },
      ack: (params, ctx) => {
        recorder.record({ kind: 'ack', session: ctx.session?.id, params });
        return extra.hooks?.ack?.(params, ctx);
      },
      sessionEnded: (session) => {
        recorder.record({ kind: 'ended', session: session.id });
        extra.hooks?.sessionEnded?.(session);
      },
      notificationRefused: (method, error, connection, session, message) => {
        recorder.record({ kind: 'refused', session: session?.id, method, code: error.code });
        extra.hooks?.notificationRefused?.(method, error, connection, session, message);
      },
    },
  });
  return { server, recorder, key };
}

/**
 * Error messages that differ from a vector's on purpose, with why. The test checks ours, and that
 * the vector's really is different (so the entry goes when the vector changes).
 */
export const MESSAGE_DIFFERENCES: Readonly<Record<string, { ours: string; why: string }>> = {
  'resolve-unsupported-type': {
    ours: 'Capability not supported',
    why: "docs/wmp-profile.md: messages are the table's canonical names (tables §1: the vector alone uses 'Resolution type not supported')",
  },
};

/** Parts of a vector's expectation that only echoing the vector could meet: not compared, with why. */
export const PARTIAL: Readonly<Record<string, { fields: readonly string[]; why: string }>> = {
  'resolve-vctm': {
    fields: ['result.metadata', 'result.trust_info'],
    why: "the type metadata document and its trust source are data only the vector holds: a resolver can return them only by copying the vector. The harness's registry (REGISTRY) answers instead, and the result must carry exactly that; wmp, type and uri are compared with the vector",
  },
};

/** Known, documented differences between the vectors and this implementation (docs/decisions.md). */
const IGNORED: Record<string, (m: any) => void> = {
  // An update result has no challenge: challenges belong to session creation.
  'capability-update-add-relay': (m) => delete m.result.challenge,
};

/** What must happen to a notification vector (it gets no answer, so the server's hooks tell). */
type NotificationOutcome =
  | { readonly accepted: 'deliver' | 'ack'; readonly why: string }
  | { readonly ended: true; readonly why: string }
  | { readonly refused: number; readonly why: string };

export const NOTIFICATION_OUTCOMES: Readonly<Record<string, NotificationOutcome>> = {
  'session-close-complete': { ended: true, why: 'the session ends; a later call on it is -31000' },
  'message-deliver-plaintext': { accepted: 'deliver', why: 'a participant delivers plaintext in a TLS session' },
  'message-deliver-encrypted': {
    accepted: 'deliver',
    why: 'a responder with no MLS member for the session takes the ciphertext unread',
  },
  'message-ack-received': { accepted: 'ack', why: 'an ack of an id the server never sent is still an ack' },
  'message-deliver-with-signature': {
    refused: -32602,
    why: 'decision 0015: `wmp.signature` is the compact detached string; the object form is refused (tables C6)',
  },
  'interop-notification-no-response': {
    accepted: 'deliver',
    why: 'a deliver notification is handled and never answered',
  },
};

interface Context {
  capabilities?: object;
  security?: object;
  participants?: string[];
}

const CONTEXTS: Record<string, Context> = {
  'ses-mls-opt-001': {
    capabilities: { messaging: { max_size: 65536 }, relay: { destinations: ['*'] } },
    security: { mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['relay'] },
    participants: [BOB],
  },
  'ses-basic-001': { capabilities: { messaging: { max_size: 65536 }, flows: { max_concurrent: 5 } } },
};
const DEFAULT_CONTEXT: Context = {
  capabilities: {
    messaging: { max_size: 65536 },
    flows: { max_concurrent: 5 },
    resolve: { supported_types: ['vctm'] },
  },
  participants: [BOB],
};

const isResponseTo = (id: unknown) => (m: Record<string, any>) => m.id === id && ('result' in m || 'error' in m);
let contextIds = 0;

async function call(client: RawClient, method: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const id = `ctx-${++contextIds}`;
  await client.send({ jsonrpc: '2.0', id, method, params });
  return client.next(isResponseTo(id));
}

/** Answers a create's challenge with a signed challenge (core §4.4.3) by `keypair`. */
export async function authenticate(
  client: RawClient,
  keypair: Keypair,
  sessionId: string,
  challenge: string,
): Promise<Record<string, any>> {
  const timestamp = rfc3339(Date.now());
  const signature = await signChallenge({ challenge, session_id: sessionId, sender: keypair.did, timestamp }, keypair);
  return call(client, 'wmp.session.authenticate', {
    wmp: { version: '0.1', session_id: sessionId, sender: keypair.did, timestamp },
    auth: { type: 'signed_challenge', challenge, signature },
  });
}

/** Opens and authenticates the session a vector runs in, as `keypair`; its real id. */
async function openContext(client: RawClient, keypair: Keypair, context: Context, ids: Identities): Promise<string> {
  const r = await call(client, 'wmp.session.create', {
    wmp: { version: '0.1', sender: keypair.did },
    capabilities_offered: context.capabilities,
    ...(context.security ? { security: context.security } : {}),
    ...(context.participants ? { participants: ids.apply(context.participants) } : {}),
  });
  expect(r.result, JSON.stringify(r)).toMatchObject({ auth_required: true, challenge: expect.stringMatching(/^ch-/) });
  const id: string = r.result.wmp.session_id;
  const a = await authenticate(client, keypair, id, r.result.challenge);
  expect(a.result, JSON.stringify(a)).toMatchObject({ authenticated: true, participant_id: keypair.did });
  return id;
}

function omit(value: any, path: string): void {
  const keys = path.split('.');
  const last = keys.pop()!;
  const parent = keys.reduce((o, k) => o?.[k], value);
  if (parent && typeof parent === 'object') delete parent[last];
}

/**
 * After a notification: the server's hooks must show its outcome; then a probe request (sent once
 * the outcome is known, so after anything the server did about it) is answered, and nothing but
 * that answer arrived on the connection since the notification was sent: no answer, no stray
 * notification.
 */
async function checkNotification(
  client: RawClient,
  from: number,
  vs: VectorServer,
  vector: Vector,
  sent: any,
  session: string | undefined,
): Promise<void> {
  const outcome = NOTIFICATION_OUTCOMES[vector.id];
  if (!outcome) throw new Error(`no NOTIFICATION_OUTCOMES entry for ${vector.id}`);
  const ofSession = (s: Seen) => s.session === session;
  if ('accepted' in outcome) {
    const seen = await vs.recorder.next((s) => ofSession(s) && s.kind !== 'ended');
    expect(seen.kind).toBe(outcome.accepted);
    expect(seen.params).toEqual(sent.params);
  } else if ('refused' in outcome) {
    const seen = await vs.recorder.next((s) => ofSession(s) && s.kind !== 'ended');
    expect(seen).toMatchObject({ kind: 'refused', method: sent.method, code: outcome.refused });
  } else {
    await vs.recorder.next((s) => ofSession(s) && s.kind === 'ended');
  }
  await client.send({ jsonrpc: '2.0', id: 'probe', method: 'wmp.nonexistent', params: { wmp: { version: '0.1' } } });
  const probe = await client.next(isResponseTo('probe'));
  expect(client.received.slice(from), 'what arrived after the notification').toEqual([probe]);
  if ('ended' in outcome) {
    const after = await call(client, 'wmp.capability.list', { wmp: { version: '0.1', session_id: session } });
    expect(after.error?.code).toBe(-31000);
  }
}

/** Sends a vector's single input and checks the answer (or what a notification did). */
export async function runSimple(
  connect: ConnectRaw,
  vs: VectorServer,
  vector: Vector,
  exact: boolean,
  ids: Identities,
): Promise<void> {
  const client = await connect(vs.server);
  try {
    let input = withCurrentTimestamps(ids.apply(vector.input));
    let expected = ids.apply(vector.expected_response ?? vector.expected_error);
    const wmp = input.params?.wmp ?? {};
    const vectorSession: string | undefined = wmp.session_id;
    let real: string | undefined;
    if (input.method !== 'wmp.session.create' && vectorSession !== 'ses-nonexistent') {
      const keypair = ids.keypair(wmp.sender ?? ALICE);
      real = await openContext(client, keypair, CONTEXTS[vectorSession ?? ''] ?? DEFAULT_CONTEXT, ids);
      if (vectorSession) {
        input = substitute(input, vectorSession, real);
        expected = substitute(expected, vectorSession, real);
      } else {
        input = { ...input, params: { ...input.params, wmp: { ...wmp, session_id: real } } };
      }
    }
    const from = client.received.length;
    await client.send(input);
    if (!('id' in input)) {
      await checkNotification(client, from, vs, vector, input, real);
      return;
    }
    const answer = structuredClone(await client.next(isResponseTo(input.id)));
    if (!vector.expected_response && !vector.expected_error) {
      // A request the vector states no answer for: it must succeed, and do what its notes say.
      expect(answer.error, JSON.stringify(answer)).toBeUndefined();
      if (vector.id === 'flow-sign-generate-proof') await checkProof(client, vs, input);
      return;
    }
    if (IGNORED[vector.id]) {
      expected = structuredClone(expected);
      IGNORED[vector.id]!(expected);
    }
    if (vector.expected_error) {
      expect(answer.error?.code, JSON.stringify(answer)).toBe(expected.error.code);
      const differs = MESSAGE_DIFFERENCES[vector.id];
      if (differs) expect(expected.error.message).not.toBe(differs.ours);
      expect(answer.error.message).toBe(differs?.ours ?? expected.error.message);
      if (expected.error.data !== undefined) expect(answer.error.data).toEqual(expected.error.data);
      return;
    }
    const partial = PARTIAL[vector.id];
    if (partial) {
      expected = structuredClone(expected);
      for (const f of partial.fields) omit(expected, f);
      const registered = REGISTRY[input.params.uri]!;
      expect(answer.result).toMatchObject({ metadata: registered.metadata, trust_info: registered.trust_info });
    }
    expect(matches(expected, answer, exact), JSON.stringify({ expected, answer })).toBe(true);
    if (input.method === 'wmp.session.create') await checkCreated(client, answer.result, input, ids);
    if (answer.result?.security?.mls_group_info !== undefined) {
      // A real GroupInfo from the responder's group, not a placeholder.
      expect(inspectMessage(answer.result.security.mls_group_info).wireformat).toBe('group_info');
    }
  } finally {
    await client.close();
  }
}

/** A created session is pending until its challenge is answered: the challenge the vector shows works. */
async function checkCreated(client: RawClient, result: any, input: any, ids: Identities): Promise<void> {
  expect(result.auth_required).toBe(true);
  const keypair = ids.keypair(input.params.wmp.sender);
  const pending = await call(client, 'wmp.capability.list', {
    wmp: { version: '0.1', session_id: result.wmp.session_id },
  });
  expect(pending.error?.code).toBe(-31002);
  const a = await authenticate(client, keypair, result.wmp.session_id, result.challenge);
  expect(a.result).toMatchObject({ authenticated: true, participant_id: keypair.did });
}

/** `flow-sign-generate-proof`'s notes: the responder completes the flow with a proof JWT over the nonce. */
async function checkProof(client: RawClient, vs: VectorServer, input: any): Promise<void> {
  const complete = await client.next(
    (m) => m.method === 'wmp.flow.complete' && m.params.flow_id === input.params.flow_id,
  );
  const jwt: string = complete.params.result.proof;
  const [header, payload, signature] = jwt.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  expect(claims).toMatchObject({ aud: input.params.params.audience, nonce: input.params.params.nonce });
  expect(
    verifyEd25519(
      vs.key.publicKey,
      new TextEncoder().encode(`${header}.${payload}`),
      Buffer.from(signature!, 'base64url'),
    ),
  ).toBe(true);
}

/** The members of a flow notification that are the responder's clock: RFC 3339, not the example's time. */
const CLOCK_FIELDS = ['params.payload.deadline', 'params.result.timestamp'];

/** `actual` equals the vector's `expected`, except that clock fields need only be RFC 3339 times. */
export function expectFlowNotification(actual: Record<string, any>, expected: Record<string, any>): void {
  const a = structuredClone(actual);
  const e = structuredClone(expected);
  for (const path of CLOCK_FIELDS) {
    const value = path.split('.').reduce((o: any, k) => o?.[k], e);
    if (value === undefined) continue;
    const got = path.split('.').reduce((o: any, k) => o?.[k], a);
    expect(isRfc3339(got), `${path}: ${got}`).toBe(true);
    omit(a, path);
    omit(e, path);
  }
  expect(a, `the ${actual.method} notification`).toEqual(e);
}

/** The approval flow vector: alice starts it, the server reports progress, bob approves, it completes. */
export async function runApprovalLifecycle(
  connect: ConnectRaw,
  vs: VectorServer,
  vector: Vector,
  ids: Identities,
): Promise<void> {
  const [start, progress, action, complete] = ids.apply(vector.input).map((s: any) => s.message);
  const alice = await connect(vs.server);
  const bob = await connect(vs.server);
  try {
    const real = await openContext(alice, ids.keypair(start.params.wmp.sender), DEFAULT_CONTEXT, ids);
    // Bob proves who he is on his own connection (a session of his), then joins alice's.
    const bobKey = ids.keypair(action.params.wmp.sender);
    await openContext(bob, bobKey, { capabilities: { messaging: {} } }, ids);
    const joined = await call(bob, 'wmp.session.join', {
      wmp: { version: '0.1', sender: bobKey.did },
      session_id: real,
    });
    expect(joined.result?.wmp?.session_id, JSON.stringify(joined)).toBe(real);
    const vectorSession = start.params.wmp.session_id;
    const sub = (m: Record<string, any>) => substitute(m, vectorSession, real);
    await alice.send(sub(start));
    expect((await alice.next(isResponseTo(start.id))).result).toMatchObject({ flow_id: start.params.flow_id });
    // Ours also tells the reviewer what it is asked: the start's params, beside the vector's members.
    const reported = await alice.next((m) => m.method === 'wmp.flow.progress');
    const { subject, body, attachments, requester, ...spec } = reported.params.payload;
    expectFlowNotification({ ...reported, params: { ...reported.params, payload: spec } }, sub(progress));
    await bob.send(sub(action));
    expect((await bob.next(isResponseTo(action.id))).result).toMatchObject({
      flow_id: action.params.flow_id,
      status: 'completed',
    });
    expectFlowNotification(await alice.next((m) => m.method === 'wmp.flow.complete'), sub(complete));
    expect({ subject, body, attachments }).toEqual(start.params.params);
    expect(requester).toBe(start.params.wmp.sender);
  } finally {
    await alice.close();
    await bob.close();
  }
}

/** The server options an interop vector's `peer_options` and `handler_action` configure. */
function interopOptions(vector: Vector): WmpServerOptions {
  const options: Record<string, unknown> = {};
  const method = vector.input.method;
  // The hooks refuse the vector's call; the session set-up before it (create, authenticate) is the
  // harness's own and must pass, which a hook refusing everything would not let happen.
  if (vector.peer_options?.authorize === false) options.authorize = (ctx: any) => ctx.request.method !== method;
  if (vector.peer_options?.validate === false) {
    options.validate = (m: string) => (m === method ? 'rejected by validator' : undefined);
  }
  const action = vector.handler_action;
  if (action?.method === 'wmp.resolve') {
    // `handler_action` is the vector's input: the handler it tells the peer to install.
    options.resolvers = {
      vctm: () => {
        if (action.error) throw new WmpError(action.error.code, action.error.data, action.error.message);
        return { metadata: action.return.metadata };
      },
    };
  }
  return options as WmpServerOptions;
}

/** Every vector file, through `connect`. */
export function describeVectors(binding: string, connect: ConnectRaw): void {
  describe(`WMP vectors over ${binding}`, () => {
    const ids = new Identities();
    let shared: VectorServer;
    beforeAll(async () => {
      shared = await vectorServer();
    });
    for (const file of VECTOR_FILES.filter((f) => f !== 'interop.json')) {
      for (const vector of loadVectors(file)) {
        it(`${file} ${vector.id}`, () =>
          vector.id === 'flow-approval-full-lifecycle'
            ? runApprovalLifecycle(connect, shared, vector, ids)
            : runSimple(connect, shared, vector, false, ids));
      }
    }
    for (const vector of loadVectors('interop.json')) {
      it(`interop.json ${vector.id}`, async () =>
        runSimple(connect, await vectorServer(interopOptions(vector)), vector, true, ids));
    }
  });
}

/** Collects frames from any transport-like source into a RawClient. */
export function rawClientFrom(
  sendFn: (m: unknown) => Promise<void>,
  closeFn: () => Promise<void>,
): RawClient & { push(frame: string): void } {
  const received: Record<string, any>[] = [];
  const waiters: Array<{ predicate: (m: Record<string, any>) => boolean; resolve: (m: Record<string, any>) => void }> =
    [];
  const push = (frame: string) => {
    const parsed = JSON.parse(frame) as Record<string, any> | Record<string, any>[];
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      received.push(m);
      for (const w of [...waiters]) {
        if (w.predicate(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    }
  };
  return {
    received,
    push,
    send: sendFn,
    close: closeFn,
    next(predicate = () => true, ms = 3000) {
      const found = received.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching message within ${ms} ms; got ${JSON.stringify(received)}`)),
          ms,
        );
        waiters.push({
          predicate,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
    },
  };
}

export type { JsonRpcMessage };
