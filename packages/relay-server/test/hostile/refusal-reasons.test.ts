// Every refusal says which case it is (issue 23 item 17): a walk over the relay's refusals, each
// asserted to carry `data.reason`, except the ones whose `data` the spec fixes (-31005
// `{capability}`, -31003 `{capability}`, -31013 `{supported_versions}`), which name their case.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import {
  authenticateRequest,
  createRequest,
  hostileTestbed,
  httpLogin,
  must,
  post,
  RawSocket,
  type RpcAnswer,
  rpc,
  timestamp,
  VERSION,
} from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();

describe('refusals carry data.reason (issue 23 item 17)', { timeout: 60_000 }, () => {
  it('over WebSocket and HTTP, for every case walked here', async () => {
    const bed = await testbed.setup({ limits: { maxQueued: 4 } });
    const s = await RawSocket.open(bed.url);
    const a = await s.login();
    const bob = generateKeypair();
    const refusals: Record<string, RpcAnswer> = {};
    const refused = async (what: string, answer: Promise<RpcAnswer> | RpcAnswer) => {
      refusals[what] = await answer;
    };

    await refused('unknown method (-32601)', s.call('org.example.nothing', { wmp: a.wmp }));
    await refused('bad params (-32602)', s.call('wmp.message.deliver', { wmp: a.wmp, to: 'not a list' }));
    await refused('no recipients (-32602)', s.deliver(a, [], 'x'));
    s.send('{"jsonrpc":"2.0","id":"nj",');
    await refused(
      'not JSON (-32700)',
      s.next((m) => m.id === null && m.error?.code === -32700),
    );
    s.send('{"jsonrpc":"1.0","id":"v1","method":"wmp.capability.list"}');
    await refused(
      'not JSON-RPC (-32600)',
      s.next((m) => m.error?.code === -32600),
    );
    const dup = rpc('wmp.capability.list', { wmp: a.wmp }, 'same-id');
    must(await s.call(dup.method, dup.params, dup.id));
    s.send(dup);
    await refused(
      'duplicate request id (-32600)',
      s.next((m) => m.id === dup.id && m.error !== undefined),
    );
    await refused(
      'unknown session (-31000)',
      s.call('wmp.capability.list', { wmp: { ...a.wmp, session_id: 'ses-nosuchsession0000' } }),
    );
    const other = await RawSocket.open(bed.url);
    await refused('session of another connection (-31002)', other.call('wmp.capability.list', { wmp: a.wmp }));
    await refused('spoofed sender (-31002)', s.deliver(a, [bob.did], 'x', { sender: bob.did }));
    const pending = must(await other.call('wmp.session.create', createRequest(bob.did).params));
    const onPending = { version: VERSION, session_id: pending.wmp.session_id as string, sender: bob.did };
    await refused('pending session (-31002)', other.call('wmp.capability.list', { wmp: onPending }));
    const stale = await authenticateRequest(bob, onPending.session_id, 'ch-notthechallenge');
    await refused('wrong challenge (-31002)', other.call(stale.method, stale.params));
    await refused(
      'resume with a token that is not current (-31000)',
      other.call('wmp.session.resume', {
        wmp: { version: VERSION, sender: a.did },
        session_id: a.sessionId,
        resumption_token: 'rt-not-the-token',
      }),
    );
    await refused(
      'timestamp out of the window (-31011)',
      s.deliver(a, [bob.did], 'x', { timestamp: timestamp(Date.now() - 3_600_000) }),
    );
    const small = await s.login(generateKeypair(), {
      capabilities_offered: { messaging: { max_size: 1000 }, relay: {}, offline: {} },
    });
    await refused('message over the negotiated max_size (-32600)', s.deliver(small, [bob.did], 'x'.repeat(2000)));
    await refused('malformed recipient (-32602)', s.deliver(a, ['did:key:zNope'], 'x'));
    const group = must(await s.call('wmp.session.create', createRequest(a.did, { participants: [bob.did] }).params));
    const groupAuth = await authenticateRequest(a.keypair, group.wmp.session_id, group.challenge);
    must(await s.call(groupAuth.method, groupAuth.params));
    const onGroup = { ...a.wmp, session_id: group.wmp.session_id as string };
    await refused(
      'recipient not in the group (-31008)',
      s.call('wmp.message.deliver', { wmp: onGroup, to: [generateKeypair().did], body: 'x' }),
    );
    const stranger = await RawSocket.open(bed.url);
    const c = await stranger.login();
    await refused(
      'join by a non-participant (-31002)',
      stranger.call('wmp.session.join', { wmp: { version: VERSION, sender: c.did }, session_id: group.wmp.session_id }),
    );
    await refused(
      'register on an unknown session (-31000)',
      stranger.call('wmp.relay.register', { wmp: { ...c.wmp, session_id: 'ses-nosuchsession0000' } }),
    );
    // One sender's share of a recipient's queue (a quarter of max_queued: one here).
    const queued = generateKeypair().did;
    must(await s.deliver(a, [queued], 'first'));
    await refused('queue share full (-31014)', s.deliver(a, [queued], 'second'));

    // HTTP: an existing HTTP session named without its token, or with a wrong one.
    const h = await httpLogin(bed.url);
    const noToken = await post(bed.url, rpc('wmp.capability.list', { wmp: h.wmp }), { 'wmp-session-id': h.sessionId });
    await refused('HTTP session without its token (-31002)', noToken.body);
    const wrongToken = await post(bed.url, rpc('wmp.capability.list', { wmp: h.wmp }), {
      'wmp-session-id': h.sessionId,
      'wmp-session-token': 'not-the-token',
    });
    await refused('HTTP session with a wrong token (-31002)', wrongToken.body);
    const unknown = await post(
      bed.url,
      rpc('wmp.capability.list', { wmp: { ...h.wmp, session_id: 'ses-nosuchsession0000' } }),
      {
        'wmp-session-id': 'ses-nosuchsession0000',
      },
    );
    await refused('HTTP session unknown (-31000)', unknown.body);

    for (const [what, answer] of Object.entries(refusals)) {
      // Each case is the refusal its label names.
      const code = Number(/\((-\d+)\)$/.exec(what)![1]);
      expect(answer.error?.code, `${what}: ${JSON.stringify(answer).slice(0, 300)}`).toBe(code);
      expect(answer.error?.data?.reason, `${what}: ${JSON.stringify(answer.error)}`).toEqual(expect.any(String));
    }
    expect(refusals['HTTP session without its token (-31002)']!.error?.data?.reason).toBe('session token required');
    expect(refusals['queue share full (-31014)']!.error).toMatchObject({
      code: -31014,
      data: { reason: 'sender_share' },
    });
    await bed.checkHealthy();
  });
});
