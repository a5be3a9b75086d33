// Live messages between two homes through a relay, as child processes: listen + send --wait,
// a message queued while the recipient is away, the REPL driven through its stdin, Ctrl-C, and
// a relay that cannot be reached.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { relayWithAliceAndBob, sendWaitToListener } from './fixtures/cli-users.js';
import { acceptAndClose, closedUrl } from './fixtures/relay.js';
import { json, runWmp, startWmp } from './fixtures/wmp-process.js';

const world = relayWithAliceAndBob();
const { homes } = world;

/** Alice's `wmp send` of "hi" to Bob through `relay`, with `--retries`. */
const sendHiVia = (relay: string, retries: string) =>
  runWmp(['--home', world.alice.home, 'send', world.bob.did, 'hi', '--relay', relay, '--retries', retries]);

describe('wmp send and listen', () => {
  it('a listening recipient gets the message at once; --wait sees it delivered; Ctrl-C ends listen with 0', async () => {
    const listen = await sendWaitToListener(world.alice, world.bob, world.relay, ['hello', 'live'], 15);
    // Without --wait: the relay answers `accepted` (the recipient is online) and wmp shows the
    // first status that follows within a few seconds: here `delivered`.
    const unwaited = await runWmp(['--home', world.alice.home, '--json', 'send', world.bob.did, 'still', 'there?']);
    expect(json(unwaited)).toMatchObject({ to: world.bob.did, status: 'delivered' });
    await listen.waitForStdout(/still there\?\n/);
    listen.child.kill('SIGINT');
    expect((await listen.ended()).code).toBe(0);
  });

  it('a message sent while the recipient is away is queued, then handed over when they listen', async () => {
    const sent = await runWmp(['--home', world.alice.home, 'send', world.bob.did, 'while', 'you', 'were', 'out']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(
      /^queued at http:\/\/127\.0\.0\.1:\d+ for did:key:\S+ \(message msg-\S+\); the relay hands it over when they connect\n$/,
    );
    const got = await runWmp(['--home', world.bob.home, '--json', 'listen', '--count', '1']);
    expect(got.code).toBe(0);
    expect(json(got)).toMatchObject({
      type: 'message',
      from: world.alice.did,
      to: [world.bob.did],
      body: { text: 'while you were out' },
    });
  });

  it('the REPL shows incoming messages while it reads commands, keeps history and reports bad lines', async () => {
    const repl = startWmp(['--home', world.bob.home, 'connect']);
    repl.write('status\n');
    await repl.waitForStdout(/^connection +connected$/m);
    expect(repl.stdout()).toMatch(new RegExp(`^you +${world.bob.did}$`, 'm'));

    await runWmp(['--home', world.alice.home, 'send', world.bob.did, 'knock', 'knock']);
    await repl.waitForStdout(/: knock knock\n/);

    repl.write(`to ${world.alice.did}\nsay who is there?\nhelp\nbogus\nsend not-a-did hi\n`);
    await repl.waitForStdout(/^Type "help <command>" for its options and examples\.$/m);
    await repl.waitForStderr(/unknown command "bogus"\nType: help\n/);
    await repl.waitForStderr(/<did>: "not-a-did" is not an Ed25519 did:key.*\nType: help send\n/);
    expect(repl.stdout()).toMatch(/^queued at http:\/\/127\.0\.0\.1:\d+ for did:key:\S+ \(message msg-\S+\)/m);
    expect(repl.stdout()).toMatch(/^ {2}mail send <did> <text\.\.\.> +seal a message/m);

    repl.write('quit\n');
    const done = await repl.ended();
    expect(done.code).toBe(0);
    const history = readFileSync(join(world.bob.home, 'history'), 'utf8');
    expect(history).toBe(`status\nto ${world.alice.did}\nsay who is there?\nhelp\nbogus\nsend not-a-did hi\nquit\n`);

    const reply = await runWmp(['--home', world.alice.home, 'listen', '--count', '1']);
    expect(reply.stdout).toMatch(/: who is there\?\n$/);
  });

  it('a relay that accepts the connection and closes it (a balancer before a dead node) is exit 4, said', async () => {
    const closer = await acceptAndClose();
    try {
      const sent = await sendHiVia(closer.url, '0');
      expect(sent).toMatchObject({ code: 4, stdout: '' });
      expect(sent.stderr).toBe(
        `wmp: relay unreachable: ${closer.url} (ECONNRESET)\n` +
          'Check the URL and that the relay is running (npm start starts one on http://127.0.0.1:8080).\n',
      );
      const listen = await runWmp([
        '--home',
        world.bob.home,
        '--json',
        'listen',
        '--relay',
        closer.url,
        '--retries',
        '1',
      ]);
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
    const sent = await runWmp([
      '--home',
      world.alice.home,
      '--json',
      'send',
      'did:web:example.com:users:bob',
      'hi',
      'web',
    ]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(json(sent)).toMatchObject({ to: 'did:web:example.com:users:bob', status: 'queued' });
    const queued = await world.relay.queued('did:web:example.com:users:bob');
    expect(queued).toHaveLength(1);
    expect(JSON.parse(queued[0]!)).toMatchObject({ params: { body: { text: 'hi web' } } });
  });

  it('a mistyped identifier is exit 2 and says so, before anything is sent', async () => {
    // A 0 for an o: not base58 at all (a letter for a letter may decode to another key).
    const typo = `${world.bob.did.slice(0, 20)}0${world.bob.did.slice(21)}`;
    const closer = await acceptAndClose();
    try {
      const cases: [string[], RegExp][] = [
        [['send', typo, 'hi'], /looks like a did:key but does not decode/],
        [['send', world.bob.did.slice(0, -1), 'hi'], /looks like a did:key but does not decode/],
        [['send', 'did:web:bad host', 'hi'], /is not a did:web/],
        [['send', 'did:jwk:eyJrdHkiOiJPS1AifQ', 'hi'], /is not a did:jwk of an Ed25519 key/],
        [['send', 'did:ion:abc', 'hi'], /wmp sends to did:key, did:jwk, did:web and x509: identifiers/],
        [['route', typo], /looks like a did:key but does not decode/],
        [['mail', 'send', typo, 'hi'], /looks like a did:key but does not decode/],
        [['allow', 'add', world.bob.did, typo], /looks like a did:key but does not decode/],
      ];
      for (const [args, message] of cases) {
        const run = await runWmp(['--home', world.alice.home, ...args, '--relay', closer.url]);
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
    const down = await sendHiVia(nowhere, '1');
    expect(down.code).toBe(4);
    expect(down.stderr).toBe(
      `wmp: relay unreachable: ${nowhere} (ECONNREFUSED; 2 attempts)\n` +
        'Check the URL and that the relay is running (npm start starts one on http://127.0.0.1:8080).\n',
    );
    const stranger = homes.make('nobody');
    const noKeys = await runWmp(['--home', stranger, 'listen', '--relay', world.relay.url]);
    expect(noKeys.code).toBe(3);
    const noRelay = await runWmp(['--home', stranger, 'keys', 'new']).then(() =>
      runWmp(['--home', stranger, 'listen']),
    );
    expect(noRelay.code).toBe(3);
    expect(noRelay.stderr).toContain('no relay given and you have no card naming one');
  });
});
