// wmp evidence: the records a relay keeps of a message sent under evidence (wmp-tables §9), as
// child processes: Alice (an SDK client under evidence) sends to Bob, whose wmp reads the records
// that name him, before and after he takes the message; a stranger's wmp finds none (exit 3).
import { DEFAULT_CLIENT_CAPABILITIES, Identity, type WmpClient } from '@wmp/client-sdk';
import { connect } from '@wmp/client-sdk/node';
import { EVIDENCE_EVENT_TYPES } from '@wmp/jsonrpc-envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { publishedUser } from './fixtures/cli-users.js';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;
let alice: WmpClient;

const user = (name: string) => publishedUser(homes, name, relay.url);

beforeAll(async () => {
  [relay] = await Promise.all([startTestRelay(), buildWmp()]);
  alice = await connect(`${relay.url}/wmp`, {
    identity: Identity.generate(),
    capabilities: { ...DEFAULT_CLIENT_CAPABILITIES, evidence: { event_types: [...EVIDENCE_EVENT_TYPES] } },
  });
}, 120_000);
afterAll(async () => {
  await alice?.close();
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

describe('wmp evidence', () => {
  it('shows the records of a message that name you, each signature checked; none is exit 3', async () => {
    const [bob, carol] = await Promise.all([user('bob'), user('carol')]);
    const seen: string[] = [];
    alice.onEvidence((e) => {
      seen.push(e.eventType ?? '');
    });
    const { messageId } = await alice.send(bob.did, { text: 'under evidence' });
    await waitFor(() => seen.includes('submission_accepted'));

    const queued = await runWmp(['--home', bob.home, '--json', 'evidence', messageId!, '--relay', relay.url]);
    expect(queued.code).toBe(0);
    expect(json(queued)).toMatchObject({
      message_id: messageId,
      relay: relay.url,
      records: [{ event_type: 'submission_accepted', issuer: relay.id, signature: { valid: true }, timestamp: null }],
    });

    // Bob takes it: the relay records its delivery, the handover and his acknowledgement.
    expect((await runWmp(['--home', bob.home, 'listen', '--count', '1'])).code).toBe(0);
    await waitFor(() => seen.includes('retrieval_confirmed'));
    const after = await runWmp(['--home', bob.home, '--json', 'evidence', messageId!, '--relay', relay.url]);
    const records = json(after).records as { event_type: string; recipient: string | null; signature: unknown }[];
    expect(records.map((r) => r.event_type).sort()).toEqual(
      ['submission_accepted', 'delivery_confirmed', 'content_handover', 'retrieval_confirmed'].sort(),
    );
    expect(records.every((r) => (r.signature as { valid: boolean }).valid)).toBe(true);
    expect(records.filter((r) => r.recipient !== null).every((r) => r.recipient === bob.did)).toBe(true);
    const human = await runWmp(['--home', bob.home, 'evidence', messageId!, '--relay', relay.url]);
    expect(human.stdout).toContain(`message  ${messageId} (4 records at ${relay.url})`);
    expect(human.stdout).toMatch(/ delivery_confirmed to did:key:\S+ +\(signature valid by did:key:\S+\)$/m);

    const none = await runWmp(['--home', carol.home, 'evidence', messageId!, '--relay', relay.url]);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain(`no evidence of message ${messageId} at ${relay.url} names you`);
  }, 120_000);

  it('send --evidence goes on a session of its own under evidence; a plain send stays plain', async () => {
    const [sender, bob] = await Promise.all([user('sender'), user('bob2')]);
    const send = async (...args: string[]) =>
      json(await runWmp(['--home', sender.home, '--json', 'send', bob.did, ...args]));
    const plainBefore = await send('plain', 'before');
    const recorded = await send('under', 'evidence', '--evidence');
    const plainAfter = await send('plain', 'after');
    const read = (id: string) => runWmp(['--home', sender.home, '--json', 'evidence', id, '--relay', relay.url]);
    const records = json(await read(recorded.message_id)).records as { event_type: string }[];
    expect(records.map((r) => r.event_type)).toContain('submission_accepted');
    for (const plain of [plainBefore, plainAfter]) expect((await read(plain.message_id)).code).toBe(3);
    // Signed without --sign: the relay takes nothing unsigned under evidence.
    const got = await runWmp(['--home', bob.home, '--json', 'listen', '--count', '3']);
    const messages = got.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(messages.find((m) => m.id === recorded.message_id)).toMatchObject({
      signature: { signer: sender.did, valid: true },
    });
  }, 60_000);

  it('send --evidence to a relay without evidence sends nothing (exit 1); --timestamp needs --tsa-anchors', async () => {
    const plain = await startTestRelay({ evidence: false });
    try {
      const [sender, bob] = await Promise.all([user('sender3'), user('bob3')]);
      const refused = await runWmp(['--home', sender.home, 'send', bob.did, 'x', '--evidence', '--relay', plain.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`${plain.url} does not offer evidence: nothing was sent`);
      expect(await plain.queued(bob.did)).toEqual([]);
    } finally {
      await plain.close();
    }
    const home = homes.make('tsa-usage');
    const bare = await runWmp(['--home', home, 'send', alice.did, 'x', '--timestamp', 'http://127.0.0.1:9/tsa']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--timestamp needs --tsa-anchors');
    const bad = await runWmp([
      '--home',
      home,
      'send',
      alice.did,
      'x',
      '--timestamp',
      'ftp://tsa',
      '--tsa-anchors',
      'x.pem',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not an http(s) URL');
  }, 60_000);
});
