// Issue 12, item 11 (the small ones, in this process; the wmp-relay process ones are in
// apps/relay/test/hostile-process.test.ts): a fetch cursor past 2^53, a client-supplied
// relay_chain, resumption tokens of a full group, box error answers that name no lane, and
// refusals logged once per cause per interval.
import { generateKeypair, relayChainWith, verifyRelayChain } from '@wmp/jcs-signing';
import { BOX_ERROR_CODES } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import { BoxApiError } from '../../src/box-api/errors.js';
import {
  createRequest,
  flood,
  hostileTestbed,
  type Login,
  metric,
  must,
  RawSocket,
  refusalsLogged,
  VERSION,
} from '../fixtures/hostile-client.js';
import { asMessage } from '../fixtures/relay-clients.js';

const testbed = hostileTestbed();

describe('the small ones (issue 12 item 11)', { timeout: 60_000 }, () => {
  it('answers wmp.message.fetch with a cursor past 2^53 with -32602, not -32603', async () => {
    const bed = await testbed.setup();
    const s = await RawSocket.open(bed.url);
    const l = await s.login();
    for (const after of ['seq:9999999999999999', 'seq:9007199254740992']) {
      const answer = await s.call('wmp.message.fetch', { wmp: l.wmp, after });
      expect(answer.error).toMatchObject({ code: -32602 });
    }
    // The largest safe position is a cursor like any other.
    expect(must(await s.call('wmp.message.fetch', { wmp: l.wmp, after: 'seq:9007199254740991' }))).toMatchObject({
      messages: [],
    });
    // A number past 2^53 in the params (issue 23 item 6): -32602 to the request's id, not -32600 to none.
    for (const [id, params] of [
      [9101, `{"wmp":${JSON.stringify(l.wmp)},"after":9007199254740993}`],
      ['since', `{"wmp":${JSON.stringify(l.wmp)},"since_epoch":18446744073709551616}`],
    ] as const) {
      s.send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"wmp.message.fetch","params":${params}}`);
      const answer = await s.next((m) => m.id === id || (m.id === null && m.error !== undefined));
      expect(answer).toMatchObject({ id, error: { code: -32602, data: { reason: 'integer out of range' } } });
    }
    await bed.checkHealthy();
  });

  it("drops a client's relay_chain: the recipient sees the relay's entry only", async () => {
    const bed = await testbed.setup();
    const sender = await RawSocket.open(bed.url);
    const s = await sender.login();
    const recipient = await RawSocket.open(bed.url);
    const r = await recipient.login();
    await recipient.register(r);
    // A well-formed entry, signed by a relay that never saw the message.
    const impostor = generateKeypair();
    const forged = await relayChainWith(
      { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { wmp: { sender: s.did }, body: 'hello' } },
      { relay: 'https://relay.example/wmp', relayId: impostor.did, signer: impostor },
    );
    const sent = must(await sender.deliver(s, [r.did], 'hello', { relay_chain: forged }));
    const got = await recipient.next((m) => m.params?.wmp?.message_id === sent.message_id);
    expect(got.params.wmp.relay_chain).toHaveLength(1);
    expect(got.params.wmp.relay_chain[0].relay_id).toBe(bed.relay.id);
    expect(got.params.wmp.relay_chain[0].signature).toBeUndefined();
    await expect(
      verifyRelayChain(asMessage(got.params), { lastRelayId: bed.relay.id, allowUnsigned: true }),
    ).resolves.toBe(1);
    await bed.checkHealthy();
  });

  it('issues a resumption token to each of the 256 participants of a group: the first and the 65th resume', async () => {
    const bed = await testbed.setup({ limits: { sessionOpensPerSecond: 1000, sessionOpenBurst: 2000 } });
    const creator = await RawSocket.open(bed.url);
    const c = await creator.login();
    const members = await flood(255, async () => {
      const socket = await RawSocket.open(bed.url);
      return { socket, login: await socket.login() };
    });
    const group: Login = await creator.login(c.keypair, { participants: members.map((m) => m.login.did) });
    // One by one, so the order of the tokens is known: the first joiner's is the oldest.
    const tokens: string[] = [];
    for (const m of members) {
      const joined = await m.socket.call('wmp.session.join', {
        wmp: { version: VERSION, sender: m.login.did },
        session_id: group.sessionId,
      });
      tokens.push(must(joined).resumption_token);
    }
    for (const i of [0, 64, 254]) {
      const socket = await RawSocket.open(bed.url);
      const resumed = await socket.call('wmp.session.resume', {
        wmp: { version: VERSION, sender: members[i]!.login.did },
        session_id: group.sessionId,
        resumption_token: tokens[i],
      });
      expect(must(resumed)).toMatchObject({ resumed: true });
      await socket.close();
    }
    await Promise.all(members.map((m) => m.socket.close()));
    await bed.checkHealthy();
  });

  it('has no box error answer that names a lane (OHAN-04)', () => {
    for (const code of BOX_ERROR_CODES) {
      const { error } = new BoxApiError(code).toJSON();
      expect(error.message, code).not.toMatch(/stranger|contact|lane/i);
    }
  });

  it('logs a full session store and exhausted connection slots once per interval, with their cause', async () => {
    const bed = await testbed.setup({
      limits: { maxPendingSessions: 2, maxUnauthenticatedConnections: 3, sessionOpenBurst: 100 },
      timings: { refusalLogIntervalMs: 60_000, pendingSessionTtlSeconds: 1, sweepIntervalMs: 100 },
    });
    const socket = await RawSocket.open(bed.url);
    const answers = await socket.batch(Array.from({ length: 20 }, () => createRequest(generateKeypair().did)));
    expect(answers.filter((a) => a.error?.code === -31007)).toHaveLength(18);
    // This connection holds one unauthenticated slot of three: two more are taken, 18 refused.
    const sockets = await flood(20, () => RawSocket.open(bed.url), 4);
    await waitFor(
      async () => (await metric(bed.url, 'wmp_relay_refusals_total{cause="unauthenticated_slots"}')) === 18,
      15_000,
      'the refused connections',
    );
    const logged = refusalsLogged(bed.logs);
    expect(logged.filter((r) => r.cause === 'session_store_full')).toEqual([{ cause: 'session_store_full', count: 1 }]);
    expect(logged.filter((r) => r.cause === 'unauthenticated_slots')).toEqual([
      { cause: 'unauthenticated_slots', count: 1 },
    ]);
    for (const s of [...sockets, socket]) await s.close();
    await waitFor(
      async () => (await metric(bed.url, 'wmp_relay_unauthenticated_connections')) === 0,
      15_000,
      'free slots',
    );
    await bed.checkHealthy();
  });
});
