// Issue 12, item 12: limits that were enforced but that no test exercised, each against a relay on
// a SQLite file over real sockets. (maxConnections is in connection-slots.test.ts, the batch form
// of maxSessionsPerConnection in session-store.test.ts.)
import { generateKeypair, MAX_RELAY_HOPS, relayChainWith, verifyRelayChain } from '@wmp/jcs-signing';
import { MAX_KEY_PACKAGES_PER_PUBLISH, rfc3339 } from '@wmp/jsonrpc-envelope';
import { MlsGroup } from '@wmp/mls-bridge';
import { WmpSession } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import { MAX_EPOCH_LAG } from '../../src/node.js';
import {
  authenticateRequest,
  createRequest,
  hostileTestbed,
  type Login,
  metric,
  must,
  RawSocket,
  VERSION,
} from '../fixtures/hostile-client.js';
import { CLIENT_CAPABILITIES, openClient } from '../fixtures/relay-clients.js';
import { Member } from '../fixtures/relay-mls-members.js';

const testbed = hostileTestbed();
const did = () => generateKeypair().did;
/** The envelope's schema bounds (jsonrpc-envelope `schemas/common.ts`): identifier lists and identifiers. */
const MAX_LIST_LENGTH = 256;
const MAX_IDENTIFIER_LENGTH = 2048;

/** A client that logged in and registered, and its socket. */
async function registered(url: string): Promise<{ socket: RawSocket; login: Login }> {
  const socket = await RawSocket.open(url);
  const login = await socket.login();
  await socket.register(login);
  return { socket, login };
}

/** A well-formed relay_chain entry, signed by a relay of no consequence. */
async function someEntry(sender: string) {
  const relay = generateKeypair();
  const [entry] = await relayChainWith(
    { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { wmp: { sender }, body: 'x' } },
    { relay: 'https://elsewhere.example/wmp', relayId: relay.did, signer: relay },
  );
  return entry!;
}

describe('limits nothing tested before (issue 12 item 12)', { timeout: 60_000 }, () => {
  it('maxSessionsPerConnection: the next session on a full connection is -31007, on another connection fine', async () => {
    const bed = await testbed.setup({ limits: { maxSessionsPerConnection: 2 } });
    const socket = await RawSocket.open(bed.url);
    const me = await socket.login();
    must(await socket.call('wmp.session.create', createRequest(did()).params));
    const third = await socket.call('wmp.session.create', createRequest(did()).params);
    expect(third.error).toMatchObject({ code: -31007, data: { reason: 'too many sessions on this connection' } });
    // Resuming a session onto the full connection counts too.
    const resumed = await socket.call('wmp.session.resume', {
      wmp: { version: VERSION, sender: me.did },
      session_id: (await (await RawSocket.open(bed.url)).login()).sessionId,
      resumption_token: 'rt-nothing',
    });
    expect(resumed.error?.code).toBe(-31007);
    const other = await RawSocket.open(bed.url);
    await other.login();
    await bed.checkHealthy();
  });

  it('maxMessageTtlSeconds: a message asking to live a year is kept at most that long', async () => {
    const bed = await testbed.setup({ timings: { maxMessageTtlSeconds: 120 } });
    // Registered, so that the statuses of its messages come to this connection.
    const { socket, login } = await registered(bed.url);
    const sent = Date.now();
    const result = must(
      await socket.deliver(login, [did()], 'long-lived', {
        expires_at: rfc3339(sent + 365 * 86_400_000),
      }),
    );
    const status = await socket.next(
      (m) => m.method === 'wmp.message.status' && m.params.message_id === result.message_id,
    );
    expect(status.params.status).toBe('queued');
    const until = Date.parse(status.params.queued_until);
    expect(until).toBeLessThanOrEqual(Date.now() + 120_000);
    expect(until).toBeGreaterThanOrEqual(sent + 118_000);
    await bed.checkHealthy();
  });

  it('registrationTtlSeconds: an expired registration no longer routes live; a new register does', async () => {
    const bed = await testbed.setup({ timings: { registrationTtlSeconds: 2 } }, { frozenClock: true });
    const r = await registered(bed.url);
    const { socket: sender, login: s } = await registered(bed.url);
    const live = must(await sender.deliver(s, [r.login.did], 'while registered'));
    await r.socket.next((m) => m.params?.wmp?.message_id === live.message_id);

    bed.clock.advance(3_000);
    // (The sender's own registration ran out too: it registers again to hear its statuses.)
    await sender.register(s);
    const late = must(await sender.deliver(s, [r.login.did], 'after the registration ran out'));
    // Not written to R's connection: the relay tells the sender it is queued.
    const status = await sender.next(
      (m) => m.method === 'wmp.message.status' && m.params.message_id === late.message_id,
    );
    expect(status.params.status).toBe('queued');
    expect(r.socket.received.some((m) => m.params?.wmp?.message_id === late.message_id)).toBe(false);
    await r.socket.register(r.login);
    await r.socket.next((m) => m.params?.wmp?.message_id === late.message_id);
    await bed.checkHealthy();
  });

  it("maxQueueBytes: a recipient's queue holds at most that many bytes (-31014 beyond)", async () => {
    const cap = 32 * 1024;
    const bed = await testbed.setup({ limits: { maxQueueBytes: cap, maxQueueBytesPerSender: cap } });
    const recipient = did();
    const socket = await RawSocket.open(bed.url);
    const login = await socket.login();
    let refusal: unknown;
    for (let i = 0; i < 10 && refusal === undefined; i++)
      refusal = (await socket.deliver(login, [recipient], 'q'.repeat(8000))).error;
    expect(refusal).toMatchObject({ code: -31014 });
    const stats = await bed.relay.stores.queue.stats(recipient);
    expect(stats.count).toBeGreaterThan(0);
    expect(stats.bytes).toBeLessThanOrEqual(cap);
    // Another recipient is unaffected.
    must(await socket.deliver(login, [did()], 'q'.repeat(8000)));
    await bed.checkHealthy();
  });

  it('MAX_RELAY_HOPS: a longer relay_chain is refused (-32602); one at the bound is dropped, never trusted', async () => {
    const bed = await testbed.setup();
    const sender = await RawSocket.open(bed.url);
    const s = await sender.login();
    const r = await registered(bed.url);
    const entry = await someEntry(s.did);
    const over = await sender.deliver(s, [r.login.did], 'x', { relay_chain: Array(MAX_RELAY_HOPS + 1).fill(entry) });
    expect(over.error?.code).toBe(-32602);
    const at = must(await sender.deliver(s, [r.login.did], 'x', { relay_chain: Array(MAX_RELAY_HOPS).fill(entry) }));
    const got = await r.socket.next((m) => m.params?.wmp?.message_id === at.message_id);
    expect(got.params.wmp.relay_chain).toHaveLength(1);
    // A verifier refuses a chain past the bound outright.
    const long = {
      jsonrpc: '2.0' as const,
      method: 'm',
      params: { wmp: { relay_chain: Array(MAX_RELAY_HOPS + 1).fill(entry) } },
    };
    await expect(verifyRelayChain(long)).rejects.toMatchObject({ data: { reason: 'too_many_hops' } });
    await bed.checkHealthy();
  });

  it('schema bounds: to and participants lists, identifier length, key packages per publish (-32602)', async () => {
    const bed = await testbed.setup();
    const socket = await RawSocket.open(bed.url);
    const login = await socket.login();
    const before = await metric(bed.url, 'wmp_relay_routed_total');
    // Well-formed identifiers (malformed ones are refused for that: recipients.test.ts).
    const many = Array.from({ length: MAX_LIST_LENGTH + 1 }, () => generateKeypair().did);
    expect((await socket.deliver(login, many, 'x')).error?.code).toBe(-32602);
    expect((await socket.deliver(login, ['d'.repeat(MAX_IDENTIFIER_LENGTH + 1)], 'x')).error?.code).toBe(-32602);
    expect((await socket.deliver(login, [], 'x')).error?.code).toBe(-32602);
    const group = await socket.call('wmp.session.create', createRequest(login.did, { participants: many }).params);
    expect(group.error?.code).toBe(-32602);
    const tooLong = await socket.call(
      'wmp.session.create',
      createRequest('d'.repeat(MAX_IDENTIFIER_LENGTH + 1)).params,
    );
    expect(tooLong.error?.code).toBe(-32602);
    const packages = Array.from({ length: MAX_KEY_PACKAGES_PER_PUBLISH + 1 }, () => ({
      key_package: 'AAAA',
      cipher_suite: 1,
    }));
    const publish = await socket.call('ohan.mls.keypackage.publish', { wmp: login.wmp, key_packages: packages });
    expect(publish.error?.code).toBe(-32602);
    // At the bounds, accepted.
    must(await socket.deliver(login, many.slice(0, MAX_LIST_LENGTH), 'x'));
    expect(await metric(bed.url, 'wmp_relay_routed_total')).toBe(before + 1);
    await bed.checkHealthy();
  });

  it(`MAX_EPOCH_LAG: an application message ${MAX_EPOCH_LAG} epochs old is forwarded, ${MAX_EPOCH_LAG + 1} is refused`, async () => {
    const bed = await testbed.setup();
    const alice = await Member.create(await openClient(bed.url, { register: false }));
    const bob = await openClient(bed.url, { register: false });
    const session = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did],
      capabilities: CLIENT_CAPABILITIES,
      security: { mode: 'mls', cipher_suites: [1] },
    });
    alice.sessionId = session.id;
    alice.group = await MlsGroup.create(alice.mls);
    must({
      result: await alice.request('wmp.mls.group.create', {
        group_id: alice.group.groupId,
        cipher_suite: 1,
        group_info: await alice.group.groupInfo(),
      }),
    });
    const from = alice.group.epoch;
    const old = [
      await alice.group.encryptParams({ wmp: { sender: alice.did }, body: 'lag 4' }),
      await alice.group.encryptParams({ wmp: { sender: alice.did }, body: 'lag 5' }),
    ];
    const deliver = (params: Record<string, any>) =>
      alice.request('wmp.message.deliver', { ciphertext: params.ciphertext }, { encrypted: true, epoch: from });
    for (let i = 0; i < MAX_EPOCH_LAG; i++) await alice.commit('update', (g) => g.update());
    expect(alice.group.epoch).toBe(from + MAX_EPOCH_LAG);
    expect(await deliver(old[0]!)).toMatchObject({ status: 'queued' });
    await alice.commit('update', (g) => g.update());
    await expect(deliver(old[1]!)).rejects.toMatchObject({
      code: -31004,
      data: { reason: 'epoch_too_old', epoch: from + MAX_EPOCH_LAG + 1 },
    });
    await alice.peer.close();
    await bob.peer.close();
    await bed.checkHealthy();
  });

  it('message size over WebSocket: a frame over maxMessageBytes closes the connection with 1009', async () => {
    const bed = await testbed.setup({ limits: { maxMessageBytes: 64 * 1024 } });
    const ok = await RawSocket.open(bed.url);
    const login = await ok.login();
    must(await ok.deliver(login, [did()], 'a'.repeat(60 * 1024)));
    const big = await RawSocket.open(bed.url);
    const l = await big.login();
    big.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'wmp.message.deliver',
      params: { wmp: l.wmp, to: [did()], body: 'a'.repeat(65 * 1024) },
    });
    expect((await big.closed).code).toBe(1009);
    expect(ok.isClosed).toBe(false);
    await bed.checkHealthy();
  });

  it('a spoofed wmp.sender in a notification routes nothing', async () => {
    const bed = await testbed.setup();
    const attacker = await RawSocket.open(bed.url);
    const a = await attacker.login();
    const victim = did();
    const r = await registered(bed.url);
    const routed = await metric(bed.url, 'wmp_relay_routed_total');
    attacker.send({
      jsonrpc: '2.0',
      method: 'wmp.message.deliver',
      params: { wmp: { ...a.wmp, sender: victim }, to: [r.login.did], body: 'spoofed' },
    });
    // A genuine notification after it: once it arrived, the spoofed one (sent first) was handled.
    attacker.send({
      jsonrpc: '2.0',
      method: 'wmp.message.deliver',
      params: { wmp: a.wmp, to: [r.login.did], body: 'genuine' },
    });
    await r.socket.next((m) => m.params?.body === 'genuine');
    expect(r.socket.received.filter((m) => m.method === 'wmp.message.deliver').map((m) => m.params.body)).toEqual([
      'genuine',
    ]);
    expect(await metric(bed.url, 'wmp_relay_routed_total')).toBe(routed + 1);
    expect(await bed.relay.stores.queue.stats(r.login.did)).toMatchObject({ count: 1 });
    await bed.checkHealthy();
  });

  it('a challenge is used up by a failed attempt: the right answer after a wrong one is refused', async () => {
    const bed = await testbed.setup();
    const socket = await RawSocket.open(bed.url);
    const me = generateKeypair();
    const created = must(await socket.call('wmp.session.create', createRequest(me.did).params));
    const sessionId = created.wmp.session_id as string;
    // Signed by another key: wrong.
    const wrong = await authenticateRequest(me, sessionId, created.challenge);
    const forged = await authenticateRequest(generateKeypair(), sessionId, created.challenge);
    (wrong.params.auth as { signature: string }).signature = (forged.params.auth as { signature: string }).signature;
    expect((await socket.call(wrong.method, wrong.params)).error?.code).toBe(-31002);
    const right = await authenticateRequest(me, sessionId, created.challenge);
    expect((await socket.call(right.method, right.params)).error?.code).toBe(-31002);
    // The session never became active: it cannot be used.
    const used = await socket.call('wmp.relay.register', {
      wmp: { version: VERSION, session_id: sessionId, sender: me.did },
    });
    expect(used.error?.code).toBe(-31002);
    await waitFor(
      async () => (await metric(bed.url, 'wmp_relay_pending_sessions')) >= 1,
      15_000,
      'the pending session',
    );
    await bed.checkHealthy();
  });
});
