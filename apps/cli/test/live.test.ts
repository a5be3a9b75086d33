// Live messages between two homes through a relay, as child processes: listen + send --wait,
// a message queued while the recipient is away, the REPL driven through its stdin, Ctrl-C, and
// a relay that cannot be reached.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndClose, closedUrl, startTestRelay, type TestRelay } from './fixtures/relay.js';
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
    // Without --wait: the relay answers `accepted` (the recipient is online) and wmp shows the
    // first status that follows within a few seconds: here `delivered`.
    const unwaited = await runWmp(['--home', alice.home, '--json', 'send', bob.did, 'still', 'there?']);
    expect(json(unwaited)).toMatchObject({ to: bob.did, status: 'delivered' });
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

  it('a relay that accepts the connection and closes it (a balancer before a dead node) is exit 4, said', async () => {
    const closer = await acceptAndClose();
    try {
      const sent = await runWmp(['--home', alice.home, 'send', bob.did, 'hi', '--relay', closer.url, '--retries', '0']);
      expect(sent).toMatchObject({ code: 4, stdout: '' });
      expect(sent.stderr).toBe(
        `wmp: relay unreachable: ${closer.url} (ECONNRESET)\n` +
          'Check the URL and that the relay is running (npm start starts one on http://127.0.0.1:8080).\n',
      );
      const listen = await runWmp(['--home', bob.home, '--json', 'listen', '--relay', closer.url, '--retries', '1']);
      expect(listen.code).toBe(4);
      expect(JSON.parse(listen.stderr)).toMatchObject({
        error: { code: 'unreachable', exit: 4, message: `relay unreachable: ${closer.url} (ECONNRESET; 2 attempts)` },
      });
      expect(closer.accepted()).toBeGreaterThanOrEqual(3);
    } finally {
      await closer.close();
    }
  });

  it('sends to a did:web: the relay queues it for that identifier', async () => {
    const sent = await runWmp(['--home', alice.home, '--json', 'send', 'did:web:example.com:users:bob', 'hi', 'web']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(json(sent)).toMatchObject({ to: 'did:web:example.com:users:bob', status: 'queued' });
    const queued = await relay.queued('did:web:example.com:users:bob');
    expect(queued).toHaveLength(1);
    expect(JSON.parse(queued[0]!)).toMatchObject({ params: { body: { text: 'hi web' } } });
  });

  it('a mistyped identifier is exit 2 and says so, before anything is sent', async () => {
    // A 0 for an o: not base58 at all (a letter for a letter may decode to another key).
    const typo = `${bob.did.slice(0, 20)}0${bob.did.slice(21)}`;
    const closer = await acceptAndClose();
    try {
      const cases: [string[], RegExp][] = [
        [['send', typo, 'hi'], /looks like a did:key but does not decode/],
        [['send', bob.did.slice(0, -1), 'hi'], /looks like a did:key but does not decode/],
        [['send', 'did:web:bad host', 'hi'], /is not a did:web/],
        [['send', 'did:jwk:eyJrdHkiOiJPS1AifQ', 'hi'], /is not a did:jwk of an Ed25519 key/],
        [['send', 'did:ion:abc', 'hi'], /wmp sends to did:key, did:jwk, did:web and x509: identifiers/],
        [['route', typo], /looks like a did:key but does not decode/],
        [['mail', 'send', typo, 'hi'], /looks like a did:key but does not decode/],
        [['allow', 'add', bob.did, typo], /looks like a did:key but does not decode/],
      ];
      for (const [args, message] of cases) {
        const run = await runWmp(['--home', alice.home, ...args, '--relay', closer.url]);
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr, args.join(' ')).toMatch(message);
      }
      expect(closer.accepted()).toBe(0);
    } finally {
      await closer.close();
    }
  });

  it('a relay that cannot be reached is retried, then exit 4 with what to check', async () => {
    const nowhere = await closedUrl();
    const down = await runWmp(['--home', alice.home, 'send', bob.did, 'hi', '--relay', nowhere, '--retries', '1']);
    expect(down.code).toBe(4);
    expect(down.stderr).toBe(
      `wmp: relay unreachable: ${nowhere} (ECONNREFUSED; 2 attempts)\n` +
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
