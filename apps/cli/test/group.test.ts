// An MLS group of three homes through a relay, as child processes: key packages, create (adds
// the others), join, an encrypted message read by listen, a removal, and what the removed member
// can no longer do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishedUser } from './fixtures/cli-users.js';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;

beforeAll(async () => {
  [relay] = await Promise.all([startTestRelay(), buildWmp()]);
});
afterAll(async () => {
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

const user = (name: string) => publishedUser(homes, name, relay.url);

/** The JSON lines a `--json listen` printed. */
function lines(stdout: string): any[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('wmp group', () => {
  it('three members: create, join, send, remove one; the removed one reads and sends no more', async () => {
    const [alice, bob, carol] = await Promise.all([user('alice'), user('bob'), user('carol')]);
    const keys = await Promise.all(
      [bob, carol].map((u) => runWmp(['--home', u.home, '--json', 'group', 'keys', '--count', '2'])),
    );
    for (const k of keys) expect(json(k)).toMatchObject({ relay: relay.url, published: 2, accepted: 2 });

    const created = await runWmp(['--home', alice.home, '--json', 'group', 'create', 'team', bob.did, carol.did]);
    expect(created.code).toBe(0);
    const group = json(created);
    expect(group).toMatchObject({ name: 'team', relay: relay.url, epoch: 2, added: [bob.did, carol.did], failed: [] });
    expect(group.id).toMatch(/^ses-/);
    expect(group.members).toEqual([alice.did, bob.did, carol.did]);

    const joined = await Promise.all(
      [bob, carol].map((u) => runWmp(['--home', u.home, '--json', 'group', 'join', group.id, '--name', 'team'])),
    );
    for (const j of joined) {
      expect(j.code).toBe(0);
      expect(json(j)).toMatchObject({ id: group.id, name: 'team' });
    }
    expect(json(await runWmp(['--home', bob.home, '--json', 'group', 'list']))).toEqual({
      groups: [{ id: group.id, name: 'team' }],
    });

    const sent = await runWmp(['--home', alice.home, '--json', 'group', 'send', 'team', 'hello', 'everyone']);
    expect(sent.code).toBe(0);
    expect(json(sent)).toMatchObject({ id: group.id, epoch: 2, to: [bob.did, carol.did] });

    const [bobGot, carolGot] = await Promise.all(
      [bob, carol].map((u) => runWmp(['--home', u.home, '--json', 'listen', '--count', '1'])),
    );
    for (const got of [bobGot, carolGot]) {
      const message = lines(got!.stdout).find((l) => l.type === 'message');
      expect(message).toMatchObject({
        from: alice.did,
        group: group.id,
        group_name: 'team',
        body: { text: 'hello everyone' },
      });
    }

    const removed = await runWmp(['--home', alice.home, '--json', 'group', 'remove', 'team', carol.did]);
    expect(removed.code).toBe(0);
    expect(json(removed)).toMatchObject({ removed: carol.did, epoch: 3, members: [alice.did, bob.did] });
    expect(json(await runWmp(['--home', alice.home, '--json', 'group', 'send', 'team', 'just', 'us'])).to).toEqual([
      bob.did,
    ]);

    const bobAfter = lines((await runWmp(['--home', bob.home, '--json', 'listen', '--count', '1'])).stdout);
    expect(bobAfter).toContainEqual(expect.objectContaining({ type: 'group_commit', epoch: 3, removed: [carol.did] }));
    expect(bobAfter).toContainEqual(expect.objectContaining({ type: 'message', body: { text: 'just us' } }));

    // Carol learns she was removed, and can neither read nor send in the group any more.
    const carolAfter = await runWmp(['--home', carol.home, '--json', 'group', 'send', 'team', 'still', 'here?']);
    expect(carolAfter.code).toBe(1);
    expect(JSON.parse(carolAfter.stderr).error).toMatchObject({
      message: 'removed from the group',
      details: { group_code: 'ERR_GROUP_REMOVED' },
    });

    // Dave was never a participant of the group session: nobody can add him.
    const dave = await user('dave');
    const outsider = await runWmp(['--home', alice.home, 'group', 'add', 'team', dave.did]);
    expect(outsider.code).toBe(1);
    expect(outsider.stderr).toContain('Only the participants named at wmp group create can ever be added');
    expect((await runWmp(['--home', alice.home, 'group', 'send', 'nosuch', 'hi'])).code).toBe(3);
  });
});
