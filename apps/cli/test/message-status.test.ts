// What became of a live message after `wmp send` returned, as child processes: a status the relay
// kept for Alice while she was away (Bob took the message later) is shown by her `listen`,
// recorded in her home and acknowledged (it leaves her queue at the relay); `wmp status` says
// what the home knows, and what it prints when it knows nothing.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { relayWithAliceAndBob } from './fixtures/cli-users.js';
import { json, runWmp, startWmp } from './fixtures/wmp-process.js';

const world = relayWithAliceAndBob();

/** Whether Alice's queue at the relay still holds a status about `id`. */
async function keptFor(did: string, id: string): Promise<boolean> {
  return (await world.relay.queued(did)).some((body) => body.includes('wmp.message.status') && body.includes(id));
}

describe('statuses that come after send returned', () => {
  it('wait at the relay; listen shows, records and acknowledges them; wmp status says what became of it', async () => {
    const sent = await runWmp(['--home', world.alice.home, '--json', 'send', world.bob.did, 'for', 'later']);
    expect(sent.code).toBe(0);
    const { message_id: id, status } = json(sent);
    expect(status).toBe('queued');

    const before = await runWmp(['--home', world.alice.home, '--json', 'status', id]);
    expect(before.code).toBe(0);
    expect(json(before)).toMatchObject({
      message_id: id,
      status: 'queued',
      to: world.bob.did,
      relay: world.relay.url,
      reason: null,
      final: false,
    });
    const human = await runWmp(['--home', world.alice.home, 'status', id]);
    expect(human.stdout).toMatch(/^status +queued: the relay keeps it until the recipient connects$/m);
    expect(human.stdout).toContain('(no final status yet: wmp listen collects statuses that wait at the relay)');

    // Bob takes it while Alice is away: the relay keeps her `delivered` in her queue.
    const got = await runWmp(['--home', world.bob.home, 'listen', '--count', '1']);
    expect(got.stdout).toMatch(/: for later\n$/);
    await waitFor(() => keptFor(world.alice.did, id), 10_000, 'the delivered status kept for Alice');

    const listen = startWmp(['--home', world.alice.home, '--json', 'listen']);
    const line = await listen.waitForStdout(/^\{"type":"status".*\}$/m);
    expect(JSON.parse(line[0])).toEqual({
      type: 'status',
      message_id: id,
      status: 'delivered',
      recipient: world.bob.did,
      reason: null,
      queued_until: null,
    });
    // Acknowledged: it leaves her queue (else it would wait there for ever).
    await waitFor(async () => !(await keptFor(world.alice.did, id)), 10_000, 'the status acknowledged');
    listen.child.kill('SIGINT');
    expect((await listen.ended()).code).toBe(0);

    const after = await runWmp(['--home', world.alice.home, '--json', 'status', id]);
    expect(json(after)).toMatchObject({ message_id: id, status: 'delivered', to: world.bob.did, final: true });
    expect((await runWmp(['--home', world.alice.home, 'status', id])).stdout).toMatch(
      /^status +delivered: handed to a connection of the recipient$/m,
    );
  });

  it('a message this home knows nothing of is exit 3, saying where statuses wait', async () => {
    const unknown = await runWmp(['--home', world.alice.home, 'status', 'msg-never-sent-from-here']);
    expect(unknown).toMatchObject({ code: 3, stdout: '' });
    expect(unknown.stderr).toBe(
      `wmp: nothing is known of message msg-never-sent-from-here in ${world.alice.home}\n` +
        'wmp knows the messages sent from this home (wmp send prints their ids). Statuses that came since ' +
        'wait at the relay: run wmp listen, then ask again.\n',
    );
    // The other home knows nothing of Alice's messages either.
    const sent = json(await runWmp(['--home', world.alice.home, '--json', 'send', world.bob.did, 'hello']));
    const elsewhere = await runWmp(['--home', world.bob.home, '--json', 'status', sent.message_id]);
    expect(elsewhere.code).toBe(3);
    expect(JSON.parse(elsewhere.stderr).error).toMatchObject({ code: 'not_found', exit: 3 });
    expect((await runWmp(['--home', world.alice.home, 'status'])).code).toBe(2);
  });
});
