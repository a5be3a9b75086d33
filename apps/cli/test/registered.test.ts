// Registered delivery from the command line, as child processes through a real relay: `send
// --sign` and "signed by" on receipt; `send --consent` shows the recipient a notice (never the
// content) and `wmp accept` (signed for consented_signed) has the relay hand it over, `wmp
// reject` has it dropped; `--deliver-after` holds it at the relay until then.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, startWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;
let alice: { home: string; did: string };
let bob: { home: string; did: string };

async function user(name: string): Promise<{ home: string; did: string }> {
  const home = homes.make(name);
  const made = json(await runWmp(['--home', home, '--json', 'keys', 'new']));
  expect((await runWmp(['--home', home, 'card', 'publish', '--relay', relay.url])).code).toBe(0);
  return { home, did: made.did };
}

/** The JSON lines a process printed, parsed. */
const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

beforeAll(async () => {
  [relay] = await Promise.all([startTestRelay(), buildWmp()]);
  [alice, bob] = await Promise.all([user('alice'), user('bob')]);
});
afterAll(async () => {
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

describe('registered delivery in the CLI', () => {
  it('send --sign: the recipient sees "signed by" the sender', async () => {
    expect((await runWmp(['--home', alice.home, 'send', bob.did, 'signed', 'words', '--sign'])).code).toBe(0);
    expect((await runWmp(['--home', alice.home, 'send', bob.did, 'plain', 'words'])).code).toBe(0);
    const human = await runWmp(['--home', bob.home, 'listen', '--count', '2']);
    expect(human.code).toBe(0);
    const [signed, plain] = human.stdout.trim().split('\n');
    expect(signed).toMatch(/: signed words \(signed by did:key:z6Mk\S+\.\.\.\S{4}\)$/);
    expect(plain).toMatch(/: plain words$/);
    expect((await runWmp(['--home', alice.home, 'send', bob.did, 'again', '--sign'])).code).toBe(0);
    const got = json(await runWmp(['--home', bob.home, '--json', 'listen', '--count', '1']));
    expect(got).toMatchObject({ body: { text: 'again' }, signature: { signer: alice.did, valid: true } });
  });

  it('send --consent consented_signed: a notice, no content; accept --sign hands it over, reject drops it', async () => {
    const sent = json(
      await runWmp([
        '--home',
        alice.home,
        '--json',
        'send',
        bob.did,
        'the',
        'secret',
        'terms',
        '--consent',
        'consented_signed',
        '--subject',
        'contract',
      ]),
    );
    const listen = startWmp(['--home', bob.home, '--json', 'listen']);
    await listen.waitForStdout(/"type":"notice"/);
    const [notice] = lines(listen.stdout());
    expect(notice).toMatchObject({
      type: 'notice',
      message_id: sent.message_id,
      from: alice.did,
      consignment_mode: 'consented_signed',
      subject: 'contract',
    });
    expect(listen.stdout()).not.toContain('secret');
    // Unsigned, the relay refuses the acceptance; signed over the hash, it hands the content over.
    const unsigned = await runWmp([
      '--home',
      bob.home,
      'accept',
      sent.message_id,
      '--content-hash',
      notice.content_hash,
    ]);
    expect(unsigned.code).not.toBe(0);
    const accepted = await runWmp([
      '--home',
      bob.home,
      '--json',
      'accept',
      sent.message_id,
      '--content-hash',
      notice.content_hash,
      '--sign',
    ]);
    expect(accepted.code).toBe(0);
    expect(json(accepted)).toMatchObject({ message_id: sent.message_id, status: 'accepted', signed: true });
    await listen.waitForStdout(/the secret terms/);
    expect(lines(listen.stdout()).at(-1)).toMatchObject({ type: 'message', id: sent.message_id, from: alice.did });
    listen.child.kill('SIGINT');
    expect((await listen.ended()).code).toBe(0);

    const refused = json(
      await runWmp(['--home', alice.home, '--json', 'send', bob.did, 'unwanted', '--consent', 'consented']),
    );
    const human = startWmp(['--home', bob.home, 'listen']);
    await human.waitForStdout(/wmp reject/);
    expect(human.stdout()).toContain(`wmp accept ${refused.message_id} | wmp reject ${refused.message_id}`);
    // Every notice Bob was shown is acknowledged: nothing waits for him.
    await expect.poll(() => relay.queued(bob.did), { timeout: 10_000 }).toEqual([]);
    human.child.kill('SIGINT');
    expect((await human.ended()).code).toBe(0);
    expect((await runWmp(['--home', bob.home, 'reject', refused.message_id])).code).toBe(0);
    // Alice is away: the relay keeps her status of it, dropped by the recipient.
    const kept = (await relay.queued(alice.did)).map((b) => JSON.parse(b).params);
    expect(kept).toContainEqual(
      expect.objectContaining({ message_id: refused.message_id, status: 'dropped', reason: 'recipient_rejected' }),
    );
  });

  it('--deliver-after holds the message at the relay until then; a bad time or mode is a usage error', async () => {
    const sent = json(
      await runWmp(['--home', alice.home, '--json', 'send', bob.did, 'later', '--deliver-after', '+3s']),
    );
    expect(sent.status).toBe('queued');
    // Held apart: nothing of it is in Bob's queue before its time.
    expect((await relay.queued(bob.did)).join('\n')).not.toContain(sent.message_id);
    const got = json(await runWmp(['--home', bob.home, '--json', 'listen', '--count', '1']));
    expect(got).toMatchObject({ id: sent.message_id, body: { text: 'later' } });
    expect((await runWmp(['--home', alice.home, 'send', bob.did, 'x', '--deliver-after', 'soon'])).code).toBe(2);
    expect((await runWmp(['--home', alice.home, 'send', bob.did, 'x', '--consent', 'maybe'])).code).toBe(2);
  });
});
