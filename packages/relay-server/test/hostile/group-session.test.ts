// Issue 12, item 8: a participant closing or reconfiguring a group session for everyone. Only the
// creator changes a group session's capabilities or security (-31002 for others, the session
// unchanged); a participant's wmp.session.close ends its own part, and the creator goes on.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import { hostileTestbed, type Login, must, RawSocket, VERSION } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();

/** The creator `a` opens a group session with `b` listed, and `b` joins it on its connection. */
async function groupOf(url: string) {
  const a = await RawSocket.open(url);
  const b = await RawSocket.open(url);
  const aHop = await a.login();
  const bHop = await b.login();
  const group = await a.login(aHop.keypair, { participants: [bHop.did] });
  must(await b.call('wmp.session.join', { wmp: { version: VERSION, sender: bHop.did }, session_id: group.sessionId }));
  const bOnGroup: Login = { ...bHop, sessionId: group.sessionId, wmp: { ...bHop.wmp, session_id: group.sessionId } };
  return { a, b, group, bOnGroup, bHop };
}

describe('group sessions (issue 12 item 8)', { timeout: 60_000 }, () => {
  it("refuses a participant's wmp.capability.update (-31002) and leaves the creator's session as it was", async () => {
    const bed = await testbed.setup();
    const { a, b, group, bOnGroup } = await groupOf(bed.url);
    const before = await bed.relay.stores.sessions.get(group.sessionId);
    for (const change of [{ security: { mode: 'mls', cipher_suites: [1] } }, { remove: ['offline'] }]) {
      const answer = await b.call('wmp.capability.update', { wmp: bOnGroup.wmp, ...change });
      expect(answer.error).toMatchObject({ code: -31002 });
    }
    const after = await bed.relay.stores.sessions.get(group.sessionId);
    expect(after?.security).toEqual(before?.security);
    expect(after?.capabilities).toEqual(before?.capabilities);
    // The creator's session works as before: a plain message reaches B.
    const sent = must(await a.deliver(group, [bOnGroup.did], 'still tls'));
    await b.next((m) => m.params?.wmp?.message_id === sent.message_id);
    // And the creator may change it.
    expect(must(await a.call('wmp.capability.update', { wmp: group.wmp, remove: ['offline'] }))).toBeDefined();
    await bed.checkHealthy();
  });

  it("ends only the participant's part on its wmp.session.close: the creator's session still works", async () => {
    const bed = await testbed.setup();
    const { a, b, group, bOnGroup } = await groupOf(bed.url);
    b.send({ jsonrpc: '2.0', method: 'wmp.session.close', params: { wmp: bOnGroup.wmp, reason: 'complete' } });
    // B's part is gone: the group session is no longer bound to B's connection.
    await waitFor(
      async () => {
        const answer = await b.call('wmp.capability.list', { wmp: bOnGroup.wmp });
        return answer.error?.code === -31002;
      },
      15_000,
      "B's part to end",
    );
    expect(await bed.relay.stores.sessions.get(group.sessionId)).toBeDefined();
    expect(must(await a.call('wmp.capability.list', { wmp: group.wmp }))).toBeDefined();
    expect(must(await a.deliver(group, [bOnGroup.did], 'after B left'))).toMatchObject({ status: 'queued' });
    // B may come back: it is still a participant.
    must(
      await b.call('wmp.session.join', {
        wmp: { version: VERSION, sender: bOnGroup.did },
        session_id: group.sessionId,
      }),
    );
    // The creator's close ends it for everyone.
    a.send({ jsonrpc: '2.0', method: 'wmp.session.close', params: { wmp: group.wmp, reason: 'complete' } });
    await waitFor(
      async () => (await bed.relay.stores.sessions.get(group.sessionId)) === undefined,
      15_000,
      'the group session to end',
    );
    await bed.checkHealthy();
  });
});
