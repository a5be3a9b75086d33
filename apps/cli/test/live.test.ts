// Live messages between two homes through a relay, as child processes: listen + send --wait,
// a message queued while the recipient is away, the REPL driven through its stdin, Ctrl-C, and
// a relay that cannot be reached.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedUrl, startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, startWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;
let alice: { home: string; did: string };
let bob: { home: string; did: string };

async function user(name: string): Promise<{ home: string; did: string }> {
  const home = homes.make(name);
  const made = json(await runWmp(['--home', home, '--json', 'keys', 'new']));
  // The card's relay is the default --relay of the live commands.
  expect((await runWmp(['--home', home, 'card', 'publish', '--relay', relay.url])).code).toBe(0);
  return { home, did: made.did };
}

beforeAll(async () => {
  [relay] = await Promise.all([startTestRelay(), buildWmp()]);
  [alice, bob] = await Promise.all([user('alice'), user('bob')]);
});
afterAll(async () => {
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

describe('wmp send and listen', () => {
  it('a listening recipient gets the message at once; --wait sees it delivered; Ctrl-C ends listen with 0', async () => {
    const listen = startWmp(['--home', bob.home, 'listen']);
    await listen.waitForStderr(/^listening as did:key:\S+ on http:\/\/127\.0\.0\.1:\d+ \(Ctrl-C to stop\)$/m);
    const sent = await runWmp([
      '--home',
      alice.home,
      '--json',
      'send',
      bob.did,
      'hello',
      'live',
      '--wait',
      '--timeout',
      '15',
    ]);
    expect(sent.code).toBe(0);
    expect(json(sent)).toEqual({
      to: bob.did,
      relay: relay.url,
      // Who the relay proved to be (its relay_id, mutual authentication).
      relay_id: relay.id,
      message_id: expect.stringMatching(/^msg-/),
      status: 'delivered',
    });
    await listen.waitForStdout(/hello live\n/);
    expect(listen.stdout()).toMatch(/^did:key:z6Mk\S+\.\.\.\S{4}: hello live\n$/);
    // Without --wait: the relay's answer says the recipient is online.
    const unwaited = await runWmp(['--home', alice.home, 'send', bob.did, 'still', 'there?']);
    expect(unwaited.stdout).toMatch(
      /^accepted by http:\/\/127\.0\.0\.1:\d+ for did:key:\S+ \(message msg-\S+\); they are online, it is on its way\n$/,
    );
    await listen.waitForStdout(/still there\?\n/);
    listen.child.kill('SIGINT');
    expect((await listen.ended()).code).toBe(0);
  });

  it('a message sent while the recipient is away is queued, then handed over when they listen', async () => {
    const sent = await runWmp(['--home', alice.home, 'send', bob.did, 'while', 'you', 'were', 'out']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(
      /^queued at http:\/\/127\.0\.0\.1:\d+ for did:key:\S+ \(message msg-\S+\); the relay hands it over when they connect\n$/,
    );
    const got = await runWmp(['--home', bob.home, '--json', 'listen', '--count', '1']);
    expect(got.code).toBe(0);
    expect(json(got)).toMatchObject({
      type: 'message',
      from: alice.did,
      to: [bob.did],
      body: { text: 'while you were out' },
    });
  });

  it('the REPL shows incoming messages while it reads commands, keeps history and reports bad lines', async () => {
    const repl = startWmp(['--home', bob.home, 'connect']);
    repl.write('status\n');
    await repl.waitForStdout(/^connection +connected$/m);
    expect(repl.stdout()).toMatch(new RegExp(`^you +${bob.did}$`, 'm'));

    await runWmp(['--home', alice.home, 'send', bob.did, 'knock', 'knock']);
    await repl.waitForStdout(/: knock knock\n/);

    repl.write(`to ${alice.did}\nsay who is there?\nhelp\nbogus\nsend not-a-did hi\n`);
    await repl.waitForStdout(/^Type "help <command>" for its options and examples\.$/m);
    await repl.waitForStderr(/unknown command "bogus"\nType: help\n/);
    await repl.waitForStderr(/<did>: "not-a-did" is not an Ed25519 did:key.*\nType: help send\n/);
    expect(repl.stdout()).toMatch(/^queued at http:\/\/127\.0\.0\.1:\d+ for did:key:\S+ \(message msg-\S+\)/m);
    expect(repl.stdout()).toMatch(/^ {2}mail send <did> <text\.\.\.> +seal a message/m);

    repl.write('quit\n');
    const done = await repl.ended();
    expect(done.code).toBe(0);
    const history = readFileSync(join(bob.home, 'history'), 'utf8');
    expect(history).toBe(`status\nto ${alice.did}\nsay who is there?\nhelp\nbogus\nsend not-a-did hi\nquit\n`);

    const reply = await runWmp(['--home', alice.home, 'listen', '--count', '1']);
    expect(reply.stdout).toMatch(/: who is there\?\n$/);
  });

  it('a relay that cannot be reached is retried, then exit 4 with what to check', async () => {
    const nowhere = await closedUrl();
    const down = await runWmp(['--home', alice.home, 'send', bob.did, 'hi', '--relay', nowhere, '--retries', '1']);
    expect(down.code).toBe(4);
    expect(down.stderr).toBe(
      `wmp: could not connect to ${nowhere} (2 attempts)\n` +
        'Check the URL and that the relay is running (npm start starts one on http://127.0.0.1:8080).\n',
    );
    const stranger = homes.make('nobody');
    const noKeys = await runWmp(['--home', stranger, 'listen', '--relay', relay.url]);
    expect(noKeys.code).toBe(3);
    const noRelay = await runWmp(['--home', stranger, 'keys', 'new']).then(() =>
      runWmp(['--home', stranger, 'listen']),
    );
    expect(noRelay.code).toBe(3);
    expect(noRelay.stderr).toContain('no relay given and you have no card naming one');
  });
});
