// wmp send to a recipient at another relay (issue 15), as child processes: Alice's home relay is
// relay 1, Bob's relay 2 (each card at its own relay); the relays are peers of each other and
// find each other's users in each other's directories. The CLI is unchanged: it talks to its
// own relay only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { type CliUser, publishedUser, sendWaitToListener } from './fixtures/cli-users.js';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, startWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relays: [TestRelay, TestRelay];
let alice: CliUser;
let bob: CliUser;

beforeAll(async () => {
  const ports = [await freePort(), await freePort()];
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const start = (i: number) =>
    startTestRelay({
      port: ports[i]!,
      federation: { peers: [urls[1 - i]!], timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 } },
    });
  const [r1, r2] = await Promise.all([start(0), start(1), buildWmp()]);
  relays = [r1!, r2!];
  [alice, bob] = await Promise.all([
    publishedUser(homes, 'alice', relays[0].url),
    publishedUser(homes, 'bob', relays[1].url),
  ]);
}, 120_000);
afterAll(async () => {
  for (const r of relays ?? []) await r.close();
  homes.cleanup();
  removeWmpBuild();
});

describe('wmp send to another relay', () => {
  it('a listener at relay 2 gets it at once; --wait at relay 1 sees it delivered', async () => {
    const listen = await sendWaitToListener(alice, bob, relays[0], ['hello', 'across'], 30);
    listen.child.kill('SIGINT');
    expect((await listen.ended()).code).toBe(0);
  }, 120_000);

  it('sent while Bob is away: kept for him at relay 2, handed over when he listens there', async () => {
    const sent = await runWmp(['--home', alice.home, 'send', bob.did, 'while', 'you', 'were', 'out']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(new RegExp(`^queued at ${relays[0].url} for did:key:\\S+ \\(message msg-\\S+\\)`));
    const got = await runWmp(['--home', bob.home, '--json', 'listen', '--count', '1']);
    expect(got.code).toBe(0);
    expect(json(got)).toMatchObject({
      type: 'message',
      from: alice.did,
      to: [bob.did],
      body: { text: 'while you were out' },
    });
  }, 120_000);

  it('a forward the peer refuses: send says dropped with the reason the relay gave, exit 1; --wait too', async () => {
    // Alice is connected at relay 2 as well: relay 2 refuses relay 1's forward of a message from her.
    const there = startWmp(['--home', alice.home, 'listen', '--relay', relays[1].url]);
    await there.waitForStderr(/^listening as did:key:\S+ on http:\/\/127\.0\.0\.1:\d+ \(Ctrl-C to stop\)$/m);
    try {
      const sent = await runWmp(['--home', alice.home, '--json', 'send', bob.did, 'refused']);
      expect(sent).toMatchObject({ code: 1, stdout: '' });
      const error = JSON.parse(sent.stderr).error;
      expect(error).toMatchObject({ code: 'failed', exit: 1, details: { status: 'dropped' } });
      // Whatever reason the relay gave, as it gave it: never a guess such as a full queue.
      const reason: string = error.details.reason;
      expect(reason).toMatch(/31002|homed/);
      expect(error.message).toBe(`the message ${error.details.message_id} was dropped by ${relays[0].url} (${reason})`);
      expect(error.hint).not.toMatch(/full/);
      const status = await runWmp(['--home', alice.home, '--json', 'status', error.details.message_id]);
      expect(json(status)).toMatchObject({ status: 'dropped', reason, final: true });

      const waited = await runWmp(['--home', alice.home, 'send', bob.did, 'refused', 'again', '--wait']);
      expect(waited.code).toBe(1);
      expect(waited.stderr).toMatch(/^wmp: the message msg-\S+ was dropped by http:\/\/127\.0\.0\.1:\d+ \((.+)\)\n/);
      expect(waited.stderr).not.toMatch(/queue is full|full queue/);
    } finally {
      there.child.kill('SIGINT');
      await there.ended();
    }
  }, 120_000);
});
