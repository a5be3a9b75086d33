// Sessions end to end from the command line (transport §6.2): Bob runs `wmp serve`, Alice opens a
// session to his identifier with `wmp connect <did>`; the relay only routes. Real relay, real wmp
// processes, two homes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, startWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay();
  await buildWmp();
});
afterAll(async () => {
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

async function person(name: string): Promise<{ home: string; did: string }> {
  const home = homes.make(name);
  await runWmp(['--home', home, 'keys', 'new']);
  const did = json(await runWmp(['--home', home, '--json', 'keys', 'show'])).did as string;
  return { home, did };
}

describe('wmp serve and wmp connect <identifier>', () => {
  it('Bob answers: resolve from his file, an approval he gives at his terminal, Alice’s message, close', async () => {
    const alice = await person('alice');
    const bob = await person('bob');
    const resolveFile = join(bob.home, 'endpoint.json');
    writeFileSync(resolveFile, JSON.stringify({ 'wmp:bob': { url: 'wss://bob.example/wmp' } }));
    const serving = startWmp([
      '--home',
      bob.home,
      'serve',
      '--relay',
      relay.url,
      '--resolve',
      `endpoint=${resolveFile}`,
      '--count',
      '1',
    ]);
    await serving.waitForStderr(/answering sessions to did:key:\S+ on/);

    const talk = startWmp(['--home', alice.home, 'connect', bob.did, '--relay', relay.url]);
    await talk.waitForStderr(/session ses-\S+ with did:key:\S+, who proved it is them/);
    await serving.waitForStdout(new RegExp(`session ses-\\S+ from ${alice.did}`));
    talk.write('resolve wmp:bob\n');
    await talk.waitForStdout(/"url":"wss:\/\/bob\.example\/wmp"/);
    talk.write('approve lunch at noon\n');
    // Bob is asked at his terminal, and says yes; Alice gets {approved, approver, timestamp}.
    await serving.waitForStderr(/approve \{"subject":"lunch at noon"\} for did:key:\S+\? \[y\/N\]/);
    serving.write('y\n');
    await talk.waitForStdout(/approved by did:key:\S+ at \d{4}-\d\d-\d\dT/);
    talk.write('sign sign_document I agree to lunch\n');
    await serving.waitForStderr(
      /sign \{"action":"sign_document"[^}]*"payload":"I agree to lunch"[^}]*\} for did:key:\S+\? \[y\/N\]/,
    );
    serving.write('y\n');
    await talk.waitForStdout(/signed by did:key:\S+ \(sign_document; the proof verified\)/);
    talk.write('say hello Bob\n');
    await serving.waitForStdout(/: \{"text":"hello Bob"\}/);
    talk.write('quit\n');
    expect((await talk.ended()).code).toBe(0);
    // The session's end ends `--count 1`.
    const served = await serving.ended();
    expect(served.code).toBe(0);
    expect(served.stdout).toMatch(/ended \(by them\)/);
  });

  it('wmp flow approve asks from the command line; Bob’s serve answers every request with --approve no', async () => {
    const alice = await person('erin');
    const bob = await person('frank');
    const serving = startWmp(['--home', bob.home, 'serve', '--relay', relay.url, '--approve', 'no', '--count', '1']);
    await serving.waitForStderr(/answering sessions to did:key:\S+ on/);
    const asked = await runWmp([
      '--home',
      alice.home,
      '--json',
      'flow',
      'approve',
      bob.did,
      'a',
      'raise',
      '--relay',
      relay.url,
    ]);
    expect(asked.code).toBe(0);
    expect(json(asked)).toMatchObject({ approved: false, approver: bob.did, timestamp: expect.any(String) });
    expect((await serving.ended()).code).toBe(0);
  });

  it('says when the relay hosts the session instead: Bob is not serving', async () => {
    const alice = await person('carol');
    const bob = await person('dave');
    const result = await runWmp(['--home', alice.home, 'connect', bob.did, '--relay', relay.url], {
      input: 'status\nquit\n',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/could not answer: the relay hosts this session/);
    expect(result.stdout).toMatch(/end to end no: the relay hosts it/);
  });
});
