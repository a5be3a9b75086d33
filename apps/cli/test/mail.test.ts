// Sealed offline mail between two homes through a relay's box, as child processes: a stranger's
// stamped mail, fetch (once), the allow list and contact mail, watch, a relay-only box, refusals.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishedUser } from './fixtures/cli-users.js';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, startWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;
let relayOnly: TestRelay;

beforeAll(async () => {
  [relay, relayOnly] = await Promise.all([
    startTestRelay({ strangerBits: 8 }),
    startTestRelay({ directory: false, strangerBits: 8 }),
    buildWmp(),
  ]);
});
afterAll(async () => {
  await Promise.all([relay?.close(), relayOnly?.close()]);
  homes.cleanup();
  removeWmpBuild();
});

const user = (name: string, url: string) => publishedUser(homes, name, url);

describe('wmp mail', () => {
  it('a stranger mails with a stamp, the recipient fetches once, allows the sender, gets contact mail', async () => {
    const [alice, bob] = await Promise.all([user('alice', relay.url), user('bob', relay.url)]);

    const sent = await runWmp(['--home', alice.home, '--json', 'mail', 'send', bob.did, 'hello', 'bob,', 'sealed']);
    expect(sent.code).toBe(0);
    const s = json(sent);
    expect(s).toMatchObject({ to: bob.did, accepted: true });
    expect(s.relays).toEqual([
      {
        relay: relay.url,
        ok: true,
        status: 'stored',
        event_id: expect.stringMatching(/^[0-9a-f]{64}$/),
        stamp_bits: 8,
      },
    ]);

    const fetched = json(await runWmp(['--home', bob.home, '--json', 'mail', 'fetch']));
    expect(fetched.errors).toEqual([]);
    expect(fetched.rejected).toEqual([]);
    expect(fetched.more).toBe(false);
    expect(fetched.messages).toEqual([
      expect.objectContaining({
        type: 'mail',
        from: alice.did,
        relay: relay.url,
        event_id: s.relays[0].event_id,
        method: 'wmp.message.deliver',
        body: { text: 'hello bob, sealed' },
      }),
    ]);
    // Taken and acknowledged: nothing the second time.
    const again = await runWmp(['--home', bob.home, 'mail', 'fetch']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe('no new mail\n');

    const added = await runWmp(['--home', bob.home, '--json', 'allow', 'add', alice.did]);
    expect(added.code).toBe(0);
    expect(json(added).relays).toEqual([{ relay: relay.url, ok: true, contacts: [alice.did] }]);
    expect(json(await runWmp(['--home', bob.home, '--json', 'allow', 'list'])).contacts).toEqual([alice.did]);

    const contact = json(
      await runWmp(['--home', alice.home, '--json', 'mail', 'send', bob.did, '--contact', 'as', 'a', 'contact']),
    );
    expect(contact.relays[0]).toMatchObject({ ok: true, stamp_bits: 0 });
    const human = await runWmp(['--home', bob.home, 'mail', 'fetch']);
    expect(human.stdout).toMatch(/^\[\S+Z\] did:key:\S+: as a contact\n$/);
    expect(human.stderr).toBe('1 new message\n');

    const removed = await runWmp(['--home', bob.home, 'allow', 'remove', alice.did]);
    expect(removed.code).toBe(0);
    expect((await runWmp(['--home', bob.home, 'allow', 'list'])).stdout).toBe('nobody is on your allow list\n');
  });

  it('watch shows mail as it arrives and stops after --count', async () => {
    const [carol, dave] = await Promise.all([user('carol', relay.url), user('dave', relay.url)]);
    const watch = startWmp(['--home', dave.home, '--json', 'mail', 'watch', '--count', '2']);
    await runWmp(['--home', carol.home, 'mail', 'send', dave.did, 'first']);
    const line = await watch.waitForStdout(/\n/);
    expect(JSON.parse(watch.stdout().slice(0, line.index))).toMatchObject({ from: carol.did, body: { text: 'first' } });
    await runWmp(['--home', carol.home, 'mail', 'send', dave.did, 'second']);
    const done = await watch.ended();
    expect(done.code).toBe(0);
    expect(
      done.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).body.text),
    ).toEqual(['first', 'second']);
    // Both were acknowledged by the watch.
    expect(json(await runWmp(['--home', dave.home, '--json', 'mail', 'fetch'])).messages).toEqual([]);
  });

  it('through a relay-only box with an imported card; refusals say why and exit non-zero', async () => {
    const [erin, frank] = await Promise.all([user('erin', relayOnly.url), user('frank', relayOnly.url)]);
    // No directory: frank has no way to look erin up.
    const unknown = await runWmp(['--home', frank.home, 'mail', 'send', erin.did, 'hi']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain(
      'a relay-only relay keeps no cards: import theirs instead (wmp card import <file>)',
    );

    const card = join(frank.home, 'erin.json');
    writeFileSync(card, (await runWmp(['--home', erin.home, '--json', 'card', 'show'])).stdout);
    expect((await runWmp(['--home', frank.home, 'card', 'import', card])).code).toBe(0);
    for (const text of ['one', 'two', 'three']) {
      expect((await runWmp(['--home', frank.home, 'mail', 'send', erin.did, text])).code).toBe(0);
    }
    // A stranger may leave 3 undelivered events per recipient.
    const fourth = await runWmp(['--home', frank.home, '--json', 'mail', 'send', erin.did, 'four']);
    expect(fourth.code).toBe(1);
    expect(JSON.parse(fourth.stderr).error).toMatchObject({
      code: 'failed',
      message: `the box holds as many undelivered events from you as it allows at ${relayOnly.url} (HTTP 429)`,
      hint: expect.stringContaining('wmp allow add'),
      details: { box_code: 'sender_limit', relay: relayOnly.url, status: 429 },
    });

    const got = json(await runWmp(['--home', erin.home, '--json', 'mail', 'fetch']));
    expect(got.messages.map((m: any) => m.body.text)).toEqual(['one', 'two', 'three']);
    expect((await runWmp(['--home', frank.home, 'mail', 'send', erin.did, 'four'])).code).toBe(0);

    const empty = await runWmp(['--home', frank.home, 'mail', 'send', erin.did, ' ']);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toBe('wmp: the message is empty\nGive some text to send.\n');
  });
});
