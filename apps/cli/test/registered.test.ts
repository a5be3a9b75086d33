// Registered delivery from the command line, as child processes through a real relay: `send
// --sign` and "signed by" on receipt; `send --consent` shows the recipient a notice (never the
// content) and `wmp accept` (signed for consented_signed) has the relay hand it over, `wmp
// reject` has it dropped; `--deliver-after` holds it at the relay until then.
import { describe, expect, it } from 'vitest';
import { relayWithAliceAndBob } from './fixtures/cli-users.js';
import { json, runWmp, startWmp } from './fixtures/wmp-process.js';

const world = relayWithAliceAndBob();

/** The JSON lines a process printed, parsed. */
const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

describe('registered delivery in the CLI', () => {
  it('send --sign: the recipient sees "signed by" the sender', async () => {
    expect((await runWmp(['--home', world.alice.home, 'send', world.bob.did, 'signed', 'words', '--sign'])).code).toBe(
      0,
    );
    expect((await runWmp(['--home', world.alice.home, 'send', world.bob.did, 'plain', 'words'])).code).toBe(0);
    const human = await runWmp(['--home', world.bob.home, 'listen', '--count', '2']);
    expect(human.code).toBe(0);
    const [signed, plain] = human.stdout.trim().split('\n');
    expect(signed).toMatch(/: signed words \(signed by did:key:z6Mk\S+\.\.\.\S{4}\)$/);
    expect(plain).toMatch(/: plain words$/);
    expect((await runWmp(['--home', world.alice.home, 'send', world.bob.did, 'again', '--sign'])).code).toBe(0);
    const got = json(await runWmp(['--home', world.bob.home, '--json', 'listen', '--count', '1']));
    expect(got).toMatchObject({ body: { text: 'again' }, signature: { signer: world.alice.did, valid: true } });
  });

  it('send --consent consented_signed: a notice, no content; accept --sign hands it over, reject drops it', async () => {
    const sent = json(
      await runWmp([
        '--home',
        world.alice.home,
        '--json',
        'send',
        world.bob.did,
        'the',
        'secret',
        'terms',
        '--consent',
        'consented_signed',
        '--subject',
        'contract',
      ]),
    );
    const listen = startWmp(['--home', world.bob.home, '--json', 'listen']);
    await listen.waitForStdout(/"type":"notice"/);
    const [notice] = lines(listen.stdout());
    expect(notice).toMatchObject({
      type: 'notice',
      message_id: sent.message_id,
      from: world.alice.did,
      consignment_mode: 'consented_signed',
      subject: 'contract',
    });
    expect(listen.stdout()).not.toContain('secret');
    // Unsigned, the relay refuses the acceptance; signed over the hash, it hands the content over.
    const unsigned = await runWmp([
      '--home',
      world.bob.home,
      'accept',
      sent.message_id,
      '--content-hash',
      notice.content_hash,
    ]);
    expect(unsigned.code).not.toBe(0);
    const accepted = await runWmp([
      '--home',
      world.bob.home,
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
    expect(lines(listen.stdout()).at(-1)).toMatchObject({
      type: 'message',
      id: sent.message_id,
      from: world.alice.did,
    });
    listen.child.kill('SIGINT');
    expect((await listen.ended()).code).toBe(0);

    const refused = json(
      await runWmp(['--home', world.alice.home, '--json', 'send', world.bob.did, 'unwanted', '--consent', 'consented']),
    );
    const human = startWmp(['--home', world.bob.home, 'listen']);
    await human.waitForStdout(/wmp reject/);
    expect(human.stdout()).toContain(`wmp accept ${refused.message_id} | wmp reject ${refused.message_id}`);
    // Every notice Bob was shown is acknowledged: nothing waits for him.
    await expect.poll(() => world.relay.queued(world.bob.did), { timeout: 10_000 }).toEqual([]);
    human.child.kill('SIGINT');
    expect((await human.ended()).code).toBe(0);
    expect((await runWmp(['--home', world.bob.home, 'reject', refused.message_id])).code).toBe(0);
    // Alice is away: the relay keeps her status of it, dropped by the recipient.
    const kept = (await world.relay.queued(world.alice.did)).map((b) => JSON.parse(b).params);
    expect(kept).toContainEqual(
      expect.objectContaining({ message_id: refused.message_id, status: 'dropped', reason: 'recipient_rejected' }),
    );
  });

  it('--deliver-after holds the message at the relay until then; a bad time or mode is a usage error', async () => {
    const sent = json(
      await runWmp(['--home', world.alice.home, '--json', 'send', world.bob.did, 'later', '--deliver-after', '+3s']),
    );
    expect(sent.status).toBe('queued');
    // Held apart: nothing of it is in Bob's queue before its time.
    expect((await world.relay.queued(world.bob.did)).join('\n')).not.toContain(sent.message_id);
    const got = json(await runWmp(['--home', world.bob.home, '--json', 'listen', '--count', '1']));
    expect(got).toMatchObject({ id: sent.message_id, body: { text: 'later' } });
    expect(
      (await runWmp(['--home', world.alice.home, 'send', world.bob.did, 'x', '--deliver-after', 'soon'])).code,
    ).toBe(2);
    expect((await runWmp(['--home', world.alice.home, 'send', world.bob.did, 'x', '--consent', 'maybe'])).code).toBe(2);
  });
});
