// A session routed end to end through `wmp-relay` (transport §6.2) between two spec-only clients
// (test/fixtures/spec-client.ts: plain ws, fetch and node:crypto, nothing of ours): A creates a
// session naming B; B answers it itself, as any WMP responder would, written here from the spec
// alone: its own session id and challenge, the check of A's signed challenge, resolve, and the
// messages A sends it. The relay only routes.
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';
import { type Binding, jcsOfStrings, type Message, openHop, SpecClient } from './fixtures/spec-client.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** The raw Ed25519 key of a did:key (multicodec 0xed01, base58btc). */
function didKeyPublicKey(did: string) {
  let n = 0n;
  for (const c of did.slice('did:key:z'.length)) n = n * 58n + BigInt(BASE58.indexOf(c));
  const bytes = Buffer.from(n.toString(16).padStart(68, '0'), 'hex');
  if (bytes[0] !== 0xed || bytes[1] !== 0x01) throw new Error('not an Ed25519 did:key');
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: bytes.subarray(2).toString('base64url') },
    format: 'jwk',
  });
}

/** B's side, from the spec: answers what the relay passes it on its connection. */
class SpecResponder {
  readonly sessions = new Map<string, { challenge: string; initiator?: string }>();
  readonly delivered: Message[] = [];
  readonly closed: string[] = [];
  #seen = 0;
  #stopped = false;

  constructor(readonly client: SpecClient) {
    void this.#run();
  }

  stop(): void {
    this.#stopped = true;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const fresh = (m: Message) => this.client.received.indexOf(m) >= this.#seen;
      const m = await this.client.next(fresh, 60_000).catch(() => undefined);
      if (m === undefined) return;
      this.#seen = this.client.received.indexOf(m) + 1;
      await this.#handle(m).catch(() => undefined);
    }
  }

  async #answer(id: unknown, result: Message): Promise<void> {
    await this.client.send({ jsonrpc: '2.0', id, result });
  }

  async #refuse(id: unknown, code: number, reason: string): Promise<void> {
    await this.client.send({ jsonrpc: '2.0', id, error: { code, message: 'Not authorized', data: { reason } } });
  }

  async #handle(m: Message): Promise<void> {
    const sid: string | undefined = m.params?.wmp?.session_id;
    if (m.method === 'wmp.session.create' && 'id' in m) {
      const id = `ses-${randomBytes(18).toString('base64url')}`;
      const challenge = `ch-${randomBytes(16).toString('base64url')}`;
      this.sessions.set(id, { challenge });
      await this.#answer(m.id, {
        wmp: { version: '0.1', session_id: id },
        capabilities: { messaging: {}, resolve: { types: ['endpoint'] } },
        security: { mode: 'tls' },
        challenge,
        auth_required: true,
        resumption_token: `rt-${randomBytes(16).toString('base64url')}`,
      });
      return;
    }
    const session = sid === undefined ? undefined : this.sessions.get(sid);
    if (session === undefined) return;
    if (m.method === 'wmp.session.authenticate') {
      const sender: string = m.params.wmp.sender;
      const [header, , signature] = String(m.params.auth.signature).split('.');
      const payload = jcsOfStrings({
        challenge: session.challenge,
        session_id: sid!,
        sender,
        timestamp: m.params.wmp.timestamp,
      });
      const ok =
        m.params.auth.challenge === session.challenge &&
        verify(
          null,
          Buffer.from(`${header}.${payload}`),
          didKeyPublicKey(sender),
          Buffer.from(signature!, 'base64url'),
        );
      if (!ok) return this.#refuse(m.id, -31002, 'bad signature');
      session.initiator = sender;
      return this.#answer(m.id, {
        wmp: { version: '0.1', session_id: sid },
        authenticated: true,
        participant_id: sender,
      });
    }
    if (session.initiator === undefined || m.params.wmp.sender !== session.initiator) {
      if ('id' in m) await this.#refuse(m.id, -31002, 'authenticate first');
      return;
    }
    if (m.method === 'wmp.resolve')
      return this.#answer(m.id, { metadata: { url: 'wss://b.example/wmp', uri: m.params.uri } });
    if (m.method === 'wmp.message.deliver') this.delivered.push(m);
    if (m.method === 'wmp.session.close') this.closed.push(sid!);
  }
}

describe.each<Binding>(['ws', 'http'])(
  'a routed session with a spec-only responder through wmp-relay (%s)',
  (binding) => {
    let relay: RelayProcess | undefined;
    const open: SpecClient[] = [];
    beforeAll(async () => {
      relay = await startRelayProcess(['--ephemeral', '--port', '0']);
    }, 30_000);
    afterEach(async () => {
      for (const c of open.splice(0)) await c.close();
    });
    afterAll(async () => {
      relay?.child.kill('SIGTERM');
      await relay?.exited;
    });

    async function party() {
      const c = await SpecClient.connect({
        origin: relay!.url,
        binding,
        authorization: 'bearer',
        answersRequests: true,
      });
      open.push(c);
      return { c, hop: await openHop(c) };
    }

    it('B answers the create, checks A’s signed challenge, answers resolve and gets A’s messages and close', async () => {
      const a = await party();
      const b = await party();
      const responder = new SpecResponder(b.c);
      try {
        const created = await a.c.call('wmp.session.create', {
          wmp: { version: '0.1', sender: a.c.did },
          participants: [b.c.did],
          capabilities_offered: { messaging: {}, resolve: {} },
          security: { mode: 'tls' },
        });
        expect(created.result).toMatchObject({ auth_required: true, challenge: expect.stringMatching(/^ch-/) });
        const sid: string = created.result.wmp.session_id;
        expect(created.result.wmp.relay_hosted).toBeUndefined();
        expect(responder.sessions.has(sid)).toBe(true);

        // Before authenticating to B, B refuses (its answer passed back unchanged).
        const early = await a.c.call('wmp.resolve', {
          wmp: { version: '0.1', session_id: sid, sender: a.c.did },
          uri: 'x',
        });
        expect(early.error).toMatchObject({ code: -31002, data: { reason: 'authenticate first' } });

        const auth = await a.c.authenticate(sid, created.result.challenge);
        expect(auth.result).toMatchObject({ authenticated: true, participant_id: a.c.did });
        const resolved = await a.c.call('wmp.resolve', {
          wmp: { version: '0.1', session_id: sid, sender: a.c.did },
          uri: 'wmp:b',
          type: 'endpoint',
        });
        expect(resolved.result).toEqual({ metadata: { url: 'wss://b.example/wmp', uri: 'wmp:b' } });

        await a.c.deliver(sid, [b.c.did], { text: 'end to end' });
        await expect.poll(() => responder.delivered.length).toBe(1);
        expect(responder.delivered[0]!.params).toMatchObject({
          body: { text: 'end to end' },
          wmp: { sender: a.c.did, session_id: sid },
        });
        await a.c.notify('wmp.session.close', { wmp: { version: '0.1', session_id: sid, sender: a.c.did } });
        await expect.poll(() => responder.closed).toEqual([sid]);
        // The route is gone: the relay no longer knows the session.
        const after = await a.c.call('wmp.capability.list', {
          wmp: { version: '0.1', session_id: sid, sender: a.c.did },
        });
        expect(after.error).toMatchObject({ code: -31000 });
      } finally {
        responder.stop();
      }
    });
  },
);

// go-wmp over HTTP names no session in any header: its answers to the requests the relay sends it
// (the offered create, the frames of the session) carry no session at all. The relay finds the
// HTTP session each request went to by the request's id (decision 0606), with the id-only binding
// go-wmp needs anyway (`--http-session-id-binding`).
describe('a routed session with a responder that posts with no Wmp-Session-Id header (go-wmp over HTTP)', () => {
  let relay: RelayProcess | undefined;
  const open: SpecClient[] = [];
  beforeAll(async () => {
    relay = await startRelayProcess(['--ephemeral', '--port', '0', '--http-session-id-binding']);
  }, 30_000);
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close();
  });
  afterAll(async () => {
    relay?.child.kill('SIGTERM');
    await relay?.exited;
  });

  it('B answers the create and the frames of the session; A gets its answers', async () => {
    const a = await SpecClient.connect({ origin: relay!.url, binding: 'ws' });
    const b = await SpecClient.connect({
      origin: relay!.url,
      binding: 'http',
      sessionHeader: false,
      answersRequests: true,
    });
    open.push(a, b);
    await openHop(a);
    await openHop(b);
    const responder = new SpecResponder(b);
    try {
      const created = await a.call('wmp.session.create', {
        wmp: { version: '0.1', sender: a.did },
        participants: [b.did],
        capabilities_offered: { messaging: {}, resolve: {} },
        security: { mode: 'tls' },
      });
      expect(created.result?.wmp.relay_hosted).toBeUndefined();
      const sid: string = created.result.wmp.session_id;
      expect(responder.sessions.has(sid)).toBe(true);
      expect((await a.authenticate(sid, created.result.challenge)).result).toMatchObject({ authenticated: true });
      const resolved = await a.call('wmp.resolve', {
        wmp: { version: '0.1', session_id: sid, sender: a.did },
        uri: 'wmp:b',
        type: 'endpoint',
      });
      expect(resolved.result).toEqual({ metadata: { url: 'wss://b.example/wmp', uri: 'wmp:b' } });
      // Every post of B (none naming its session in a header) was taken.
      expect(b.http.every((x) => x.status < 300)).toBe(true);
    } finally {
      responder.stop();
    }
  });
});
