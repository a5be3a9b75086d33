// A whole WMP session between two spec-only clients (test/fixtures/spec-client.ts: plain ws, fetch
// and node:crypto, nothing of ours) through `wmp-relay` started from its sources, on both
// bindings. What the relay must do is docs/architecture.md ("Message statuses", "Group sessions")
// and docs/wmp-profile.md (the HTTP binding); the clients behave like go-wmp and wmp-js: they never
// ack, resume without `last_received_id`, read no response header and throw on any non-2xx HTTP
// answer.
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { metric, type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';
import {
  type Binding,
  callUntilRefused,
  HttpStatusError,
  jcsOfStrings,
  type Message,
  openHop,
  SpecClient,
  SpecIdentity,
} from './fixtures/spec-client.js';

const isStatus = (messageId: unknown) => (m: Message) =>
  m.method === 'wmp.message.status' && m.params?.message_id === messageId;
const isDeliverOf = (text: string) => (m: Message) =>
  m.method === 'wmp.message.deliver' && m.params?.body?.text === text;
const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2)}`;

describe('the spec-only client fixture', () => {
  const vectors = JSON.parse(
    readFileSync(new URL('../../../vectors/wmp-signatures/wmp-signatures.json', import.meta.url), 'utf8'),
  );

  it("derives the independent vectors' did:key and kid from their seeds", () => {
    for (const key of Object.values<any>(vectors.keys)) {
      const identity = SpecIdentity.fromSeed(Buffer.from(key.seed_hex, 'hex'));
      expect({ did: identity.did, kid: identity.kid }).toEqual({ did: key.did, kid: key.kid });
    }
  });

  it('builds the challenge payload the vectors signed, and signs what their key verifies', () => {
    const alice = vectors.keys.alice;
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(alice.public_hex, 'hex').toString('base64url') },
      format: 'jwk',
    });
    const valid = vectors.challenges.filter((c: any) => c.valid && c.claims.sender === alice.did);
    expect(valid.length).toBeGreaterThan(0);
    for (const c of valid) {
      const [header, , signature] = c.signature.split('.');
      const input = Buffer.from(`${header}.${jcsOfStrings(c.claims)}`);
      expect(verify(null, input, publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
      const ours = SpecIdentity.fromSeed(Buffer.from(alice.seed_hex, 'hex')).signChallenge(c.claims);
      const [h, empty, s] = ours.split('.');
      expect(empty).toBe('');
      expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toEqual({
        alg: 'EdDSA',
        b64: false,
        crit: ['b64'],
        kid: alice.kid,
      });
      expect(verify(null, Buffer.from(`${h}.${jcsOfStrings(c.claims)}`), publicKey, Buffer.from(s!, 'base64url'))).toBe(
        true,
      );
    }
  });
});

interface Mode {
  readonly name: string;
  readonly binding: Binding;
  readonly args: readonly string[];
  readonly authorization: 'bearer' | 'none';
}

const MODES: readonly Mode[] = [
  { name: 'WebSocket', binding: 'ws', args: [], authorization: 'none' },
  {
    name: 'HTTP+SSE, the token from the results as Authorization: Bearer',
    binding: 'http',
    args: [],
    authorization: 'bearer',
  },
  {
    name: 'HTTP+SSE, bound by session id alone (--http-session-id-binding)',
    binding: 'http',
    args: ['--http-session-id-binding'],
    authorization: 'none',
  },
];

for (const mode of MODES) {
  describe(`two spec-only clients through wmp-relay over ${mode.name}`, () => {
    let relay: RelayProcess | undefined;
    const open: SpecClient[] = [];

    beforeAll(async () => {
      relay = await startRelayProcess(['--ephemeral', '--port', '0', ...mode.args]);
    }, 30_000);
    afterEach(async () => {
      const clients = open.splice(0);
      for (const c of clients) await c.close();
      // Transport §4.2, decision 0055: every JSON-RPC answer is HTTP 200 with its request's id in
      // the body (errors included); a notification is taken with a 2xx and no body.
      const posts = clients.flatMap((c) => c.http).filter((x) => x.method === 'POST');
      const wrong = posts.filter((x) => {
        const ids = [x.body].flat().map((m: any) => m?.id);
        const ok = x.requestIds.length === 0 ? x.status >= 200 && x.status < 300 : x.status === 200;
        return !ok || !x.requestIds.every((id) => ids.includes(id));
      });
      expect(wrong, 'HTTP answers that are not 200 with the request id (2xx for notifications)').toEqual([]);
      if (mode.binding === 'ws') await waitForGauge('wmp_relay_connections', 0);
    });
    afterAll(async () => {
      if (relay && relay.child.exitCode === null) {
        relay.child.kill('SIGTERM');
        await relay.exited;
      }
    });

    async function client(identity?: SpecIdentity): Promise<SpecClient> {
      const c = await SpecClient.connect({
        origin: relay!.url,
        binding: mode.binding,
        authorization: mode.authorization,
        ...(identity ? { identity } : {}),
      });
      open.push(c);
      return c;
    }

    const gauge = (name: string) => metric(relay!.url, name);

    /** Polls the relay's own gauge until it reads `value`. */
    const waitForGauge = (name: string, value: number) =>
      expect.poll(() => gauge(name), { timeout: 10_000, interval: 10 }).toBe(value);

    /**
     * `c` goes offline, and the relay knows it before the test goes on. WebSocket: the relay's
     * connection gauge has dropped by one. HTTP: the SSE stream's socket is destroyed; the relay
     * takes that FIN before it can answer a request sent after it on another socket, so one
     * round trip to the relay afterwards orders the two (no gauge counts SSE streams).
     */
    async function goOffline(c: SpecClient): Promise<void> {
      if (mode.binding === 'ws') {
        const before = await gauge('wmp_relay_connections');
        await c.close();
        await waitForGauge('wmp_relay_connections', before - 1);
      } else {
        c.closeEvents();
        await (await fetch(`${relay!.url}/health`)).text();
      }
    }

    /** A registered party with its hop session. */
    async function party(identity?: SpecIdentity) {
      const c = await client(identity);
      const hop = await openHop(c);
      return { c, hop };
    }

    it('creates, authenticates with a signed did:key challenge and registers', async () => {
      const { c, hop } = await party();
      expect(hop.create.result).toMatchObject({
        wmp: { version: '0.1', session_id: expect.stringMatching(/^ses-[A-Za-z0-9]+$/) },
        challenge: expect.stringMatching(/^ch-/),
        auth_required: true,
        resumption_token: expect.any(String),
      });
      expect(hop.authenticate.result).toMatchObject({ authenticated: true, participant_id: c.did, identity: c.did });
      expect(hop.register.result).toMatchObject({ registered: true });
      if (mode.authorization === 'bearer') {
        // docs/wmp-profile.md, "Bindings": the HTTP binding secret is in the create and
        // authenticate results.
        expect(hop.create.result.wmp.session_token).toEqual(expect.any(String));
        expect(hop.authenticate.result.wmp.session_token).toEqual(expect.any(String));
      }
    });

    it('live: B receives it, A gets `delivered` exactly once, though nobody acks', async () => {
      const a = await party();
      const b = await party();
      const text = unique('live');
      await a.c.deliver(a.hop.sessionId, [b.c.did], { text });
      const got = await b.c.next(isDeliverOf(text));
      expect(got.params.wmp.sender).toBe(a.c.did);
      const id = got.params.wmp.message_id;
      expect(id).toEqual(expect.any(String));
      await a.c.next((m) => isStatus(id)(m) && m.params.status === 'delivered');

      // A later message is the marker: anything more about the first came before its status.
      const marker = unique('marker');
      await a.c.deliver(a.hop.sessionId, [b.c.did], { text: marker });
      const markerId = (await b.c.next(isDeliverOf(marker))).params.wmp.message_id;
      await a.c.next((m) => isStatus(markerId)(m) && m.params.status === 'delivered');
      expect(a.c.all(isStatus(id)).map((m) => m.params.status)).toEqual(['delivered']);
      expect(b.c.all(isDeliverOf(text))).toHaveLength(1);
    });

    it('offline: A gets `queued`, then `delivered` once B resumes (rotated token, no last_received_id)', async () => {
      const a = await party();
      const identity = SpecIdentity.generate();
      const b = await party(identity);
      await goOffline(b.c);

      const text = unique('offline');
      await a.c.deliver(a.hop.sessionId, [identity.did], { text });
      const queued = await a.c.next((m) => m.method === 'wmp.message.status' && m.params.status === 'queued');
      const id = queued.params.message_id;
      expect(queued.params.recipient).toBe(identity.did);

      const b2 = await client(identity);
      const resumed = await b2.resume(b.hop.sessionId, b.hop.resumptionToken);
      expect(resumed.result).toMatchObject({ resumed: true, resumption_token: expect.any(String) });
      expect(resumed.result.resumption_token).not.toBe(b.hop.resumptionToken);
      if (mode.binding === 'http') await b2.openEvents();
      const got = await b2.next(isDeliverOf(text));
      expect(got.params.wmp.message_id).toBe(id);
      await a.c.next((m) => isStatus(id)(m) && m.params.status === 'delivered');

      const marker = unique('marker');
      await a.c.deliver(a.hop.sessionId, [identity.did], { text: marker });
      const markerId = (await b2.next(isDeliverOf(marker))).params.wmp.message_id;
      await a.c.next((m) => isStatus(markerId)(m) && m.params.status === 'delivered');
      expect(a.c.all(isStatus(id)).map((m) => m.params.status)).toEqual(['queued', 'delivered']);
      expect(b2.all(isDeliverOf(text))).toHaveLength(1);
    });

    it('a session that offered no capabilities (go-wmp’s CLI) still delivers to anyone', async () => {
      const a = await client();
      const hop = await openHop(a, {});
      expect(hop.create.result.capabilities).toEqual({});
      const b = await party();
      const text = unique('bare');
      await a.deliver(hop.sessionId, [b.c.did], { text });
      expect((await b.c.next(isDeliverOf(text))).params.wmp.sender).toBe(a.did);
      const asked = unique('bare-request');
      const answer = await a.call('wmp.message.deliver', {
        wmp: { version: '0.1', session_id: hop.sessionId, sender: a.did },
        to: [b.c.did],
        body: { text: asked },
      });
      expect(answer.result?.message_id, JSON.stringify(answer)).toEqual(expect.any(String));
      await b.c.next(isDeliverOf(asked));
    });

    it('holds a deliver to the messaging.max_size its session negotiated (65536 here)', async () => {
      const a = await party();
      const b = await party();
      expect(a.hop.create.result.capabilities.messaging).toEqual({ max_size: 65536 });
      const deliver = (text: string) => ({
        wmp: { version: '0.1', session_id: a.hop.sessionId, sender: a.c.did },
        to: [b.c.did],
        body: { text },
      });
      const big = `big-${'x'.repeat(70_000)}`;
      const refused = await a.c.call('wmp.message.deliver', deliver(big));
      expect(refused.error, JSON.stringify(refused).slice(0, 300)).toMatchObject({
        code: -32600,
        data: { reason: 'message too large', max_size: 65536 },
      });
      // As a notification: `dropped`, with the reason.
      await a.c.notify('wmp.message.deliver', deliver(big));
      await a.c.next((m) => m.method === 'wmp.message.status' && m.params?.reason === 'message too large');
      // Under the limit (multi-byte text counts its UTF-8 bytes) it goes through.
      const fits = unique('fits');
      const ok = await a.c.call('wmp.message.deliver', deliver(`${fits}${'é'.repeat(30_000)}`));
      expect(ok.result?.message_id, JSON.stringify(ok).slice(0, 300)).toEqual(expect.any(String));
      const over = await a.c.call('wmp.message.deliver', deliver(`${fits}${'é'.repeat(33_000)}`));
      expect(over.error?.code).toBe(-32600);
      const got = await b.c.next((m) => m.method === 'wmp.message.deliver' && m.params?.body?.text?.startsWith(fits));
      expect(got.params.body.text.length).toBe(fits.length + 30_000);
      expect(b.c.all((m) => m.method === 'wmp.message.deliver' && m.params?.body?.text?.startsWith('big-'))).toEqual(
        [],
      );
    });

    it("a deliver request's result says what happened: `accepted` to an online recipient, `queued` to an offline one", async () => {
      const a = await party();
      const identity = SpecIdentity.generate();
      const b = await party(identity);
      const request = (text: string) =>
        a.c.call('wmp.message.deliver', {
          wmp: { version: '0.1', session_id: a.hop.sessionId, sender: a.c.did },
          to: [identity.did],
          body: { text },
        });
      const live = await request(unique('live'));
      expect(live.result, JSON.stringify(live)).toMatchObject({ status: 'accepted' });
      await a.c.next((m) => isStatus(live.result.message_id)(m) && m.params.status === 'delivered');
      expect(a.c.all(isStatus(live.result.message_id)).map((m) => m.params.status)).toEqual(['delivered']);

      await goOffline(b.c);
      const later = await request(unique('later'));
      expect(later.result, JSON.stringify(later)).toMatchObject({ status: 'queued' });
      await a.c.next((m) => isStatus(later.result.message_id)(m) && m.params.status === 'queued');
    });

    it('a notification keeps the wmp.message_id its sender chose: forwarded and in every status, refusals too', async () => {
      const a = await party();
      const b = await party();
      const mine = unique('mine');
      const notify = (id: string, text: string, to: string[] = [b.c.did]) =>
        a.c.notify('wmp.message.deliver', {
          wmp: { version: '0.1', session_id: a.hop.sessionId, sender: a.c.did, message_id: id },
          to,
          body: { text },
        });
      await notify(mine, 'first');
      expect((await b.c.next(isDeliverOf('first'))).params.wmp.message_id).toBe(mine);
      await a.c.next((m) => isStatus(mine)(m) && m.params.status === 'delivered');

      // The same id again with another body: refused for that recipient, under that id.
      await notify(mine, 'second');
      const reused = await a.c.next((m) => isStatus(mine)(m) && m.params.status === 'dropped');
      expect(reused.params).toMatchObject({ recipient: b.c.did, reason: 'message_id reused' });
      // The same message again (a retry): taken once, nothing more said about it.
      await notify(mine, 'first');
      // A refused notification's `dropped` names the sender's id too (here: a malformed recipient).
      const refusedId = unique('refused');
      await notify(refusedId, 'nobody', ['did:key:zNope']);
      const dropped = await a.c.next((m) => isStatus(refusedId)(m));
      expect(dropped.params).toMatchObject({ status: 'dropped', reason: expect.stringMatching(/^to\.0: /) });
      // A marker: everything about the earlier ones came before its status.
      const marker = unique('marker');
      await notify(marker, 'marker');
      await a.c.next((m) => isStatus(marker)(m) && m.params.status === 'delivered');
      expect(a.c.all(isStatus(mine)).map((m) => m.params.status)).toEqual(['delivered', 'dropped']);
      expect(b.c.all((m) => m.method === 'wmp.message.deliver' && m.params.wmp.message_id === mine)).toHaveLength(1);
      expect(b.c.all(isDeliverOf('second'))).toEqual([]);
    });

    it('a resumption token that was used is refused with -31000 (core §4.5.4)', async () => {
      const identity = SpecIdentity.generate();
      const b = await party(identity);
      await goOffline(b.c);
      const b2 = await client(identity);
      expect((await b2.resume(b.hop.sessionId, b.hop.resumptionToken)).result?.resumed).toBe(true);
      const b3 = await client(identity);
      const again = await b3.resume(b.hop.sessionId, b.hop.resumptionToken);
      expect(again.error?.code, JSON.stringify(again)).toBe(-31000);
      const b4 = await client(identity);
      const unknown = await b4.resume('ses-doesnotexist0000', b.hop.resumptionToken);
      expect(unknown.error?.code, JSON.stringify(unknown)).toBe(-31000);
      // The current token of another session of the same identity is not this session's.
      const other = await party(identity);
      const b5 = await client(identity);
      const crossed = await b5.resume(b.hop.sessionId, other.hop.resumptionToken);
      expect(crossed.error?.code, JSON.stringify(crossed)).toBe(-31000);
      if (mode.binding === 'http') {
        // wmp-js keeps naming its session in `Wmp-Session-Id` when it resumes: the answer is the
        // same JSON-RPC error, not an HTTP refusal of the header.
        const named = await client(identity);
        named.sessionId = b.hop.sessionId;
        const refused = await named
          .resume(b.hop.sessionId, b.hop.resumptionToken)
          .catch((e: unknown) => e as HttpStatusError | Message);
        expect(refused instanceof HttpStatusError ? `HTTP ${refused.status}` : refused.error?.code).toBe(-31000);
      }
    });

    it('a session A opens with participants [B] reaches B, who never calls join (docs/architecture.md)', async () => {
      const a = await party();
      const b = await party();
      const created = await a.c.create({ messaging: { max_size: 65536 }, offline: {} }, [b.c.did]);
      expect(created.result?.wmp?.session_id, JSON.stringify(created)).toMatch(/^ses-/);
      const group: string = created.result.wmp.session_id;
      expect(group).not.toBe(a.hop.sessionId);
      const authenticated = await a.c.authenticate(group, created.result.challenge);
      expect(authenticated.result?.authenticated, JSON.stringify(authenticated)).toBe(true);

      const text = unique('group');
      await a.c.deliver(group, [b.c.did], { text });
      const got = await b.c.next(isDeliverOf(text));
      expect(got.params.wmp).toMatchObject({ session_id: group, sender: a.c.did });
      expect(b.c.all((m) => m.method === 'wmp.message.deliver' && m.params.body?.text === text)).toHaveLength(1);
    });

    it('B, listed in a session A opened, replies on it without join; a stranger may not (docs/wmp-profile.md)', async () => {
      const a = await party();
      const b = await party();
      const created = await a.c.create({ messaging: { max_size: 65536 }, offline: {} }, [b.c.did]);
      const group: string = created.result.wmp.session_id;
      await a.c.authenticate(group, created.result.challenge);

      // A notification with no `to`: every other participant, here A.
      const reply = unique('reply');
      await b.c.deliver(group, undefined, { text: reply });
      const got = await a.c.next(isDeliverOf(reply));
      expect(got.params.wmp).toMatchObject({ session_id: group, sender: b.c.did });

      // A request is answered with a result, not -31002.
      const asked = unique('asked');
      const answer = await b.c.call('wmp.message.deliver', {
        wmp: { version: '0.1', session_id: group, sender: b.c.did },
        to: [a.c.did],
        content_type: 'application/json',
        body: { text: asked },
      });
      expect(answer.result?.message_id, JSON.stringify(answer)).toEqual(expect.any(String));
      await a.c.next(isDeliverOf(asked));

      const stranger = await party();
      const refused = await stranger.c.call('wmp.message.deliver', {
        wmp: { version: '0.1', session_id: group, sender: stranger.c.did },
        to: [a.c.did],
        body: { text: unique('stranger') },
      });
      expect(refused.error?.code, JSON.stringify(refused)).toBe(-31002);
      expect(refused.error?.data?.reason).toEqual(expect.any(String));
    });

    it('close: a later call on a closed session is -31000', async () => {
      const a = await party();
      const b = await party();
      const created = await a.c.create({ messaging: { max_size: 65536 } }, [b.c.did]);
      const group: string = created.result.wmp.session_id;
      await a.c.authenticate(group, created.result.challenge);
      await a.c.notify('wmp.session.close', { wmp: { version: '0.1', session_id: group }, reason: 'complete' });
      const afterGroup = await callUntilRefused(a.c, group);
      expect(afterGroup.error?.code, JSON.stringify(afterGroup)).toBe(-31000);

      await a.c.notify('wmp.session.close', {
        wmp: { version: '0.1', session_id: a.hop.sessionId },
        reason: 'complete',
      });
      const afterHop = await callUntilRefused(a.c, a.hop.sessionId);
      expect(afterHop.error?.code, JSON.stringify(afterHop)).toBe(-31000);
    });

    if (mode.binding === 'http') {
      it('answers JSON-RPC errors with HTTP 200 and the request id in the body (transport §4.2)', async () => {
        const a = await party();
        const unknownMethod = await a.c.call('wmp.nonexistent', {
          wmp: { version: '0.1', session_id: a.hop.sessionId },
        });
        expect(unknownMethod.error?.code).toBe(-32601);

        // A session id the relay never issued, named in the header and the body.
        const stranger = await client();
        stranger.sessionId = 'ses-doesnotexist0000';
        const missing = await stranger
          .call('wmp.capability.list', { wmp: { version: '0.1', session_id: 'ses-doesnotexist0000' } })
          .catch((e: unknown) => e as HttpStatusError | Message);
        expect(missing instanceof HttpStatusError ? `HTTP ${missing.status}` : missing.error?.code).toBe(-31000);

        // An HTTP session named without its binding secret: -31002 saying so.
        const tokenless = await client();
        tokenless.sessionId = a.hop.sessionId;
        const noToken = await tokenless
          .call('wmp.capability.list', { wmp: { version: '0.1', session_id: a.hop.sessionId } })
          .catch((e: unknown) => e as HttpStatusError | Message);
        if (mode.authorization === 'bearer') {
          expect(noToken instanceof HttpStatusError ? `HTTP ${noToken.status}` : noToken.error).toMatchObject({
            code: -31002,
            data: { reason: 'session token required' },
          });
        }

        if (mode.authorization === 'bearer') {
          // A wrong binding secret: still a JSON-RPC answer (an error), not a 401.
          const forger = await client();
          forger.sessionId = a.hop.sessionId;
          forger.sessionToken = 'not-the-token';
          const forged = await forger
            .call('wmp.capability.list', { wmp: { version: '0.1', session_id: a.hop.sessionId } })
            .catch((e: unknown) => e as HttpStatusError | Message);
          expect(forged instanceof HttpStatusError ? `HTTP ${forged.status}` : typeof forged.error?.code).toBe(
            'number',
          );
        }
      });
    }
  });
}
