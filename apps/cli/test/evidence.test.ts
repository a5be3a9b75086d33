// wmp evidence: the records a relay keeps of a message sent under evidence (wmp-tables §9), as
// child processes: Alice (an SDK client under evidence) sends to Bob, whose wmp reads the records
// that name him, before and after he takes the message; a stranger's wmp finds none (exit 3).
import { DEFAULT_CLIENT_CAPABILITIES, Identity, type WmpClient } from '@wmp/client-sdk';
import { connect } from '@wmp/client-sdk/node';
import { EVIDENCE_EVENT_TYPES } from '@wmp/jsonrpc-envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;
let alice: WmpClient;

async function user(name: string): Promise<{ home: string; did: string }> {
  const home = homes.make(name);
  const made = json(await runWmp(['--home', home, '--json', 'keys', 'new']));
  expect((await runWmp(['--home', home, 'card', 'publish', '--relay', relay.url])).code).toBe(0);
  return { home, did: made.did };
}

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
});
