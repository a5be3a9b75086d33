// wmp route: how the relay would route to an identifier (ohan.relay.resolve), as a child process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;
let alice: { home: string; did: string };

beforeAll(async () => {
  [relay] = await Promise.all([
    startTestRelay({
      federation: { routes: [{ pattern: 'did:web:corp.example*', url: 'https://relay.corp.example/wmp' }] },
    }),
    buildWmp(),
  ]);
  const home = homes.make('alice');
  const made = json(await runWmp(['--home', home, '--json', 'keys', 'new']));
  expect((await runWmp(['--home', home, 'card', 'publish', '--relay', relay.url])).code).toBe(0);
  alice = { home, did: made.did };
}, 120_000);
afterAll(async () => {
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

describe('wmp route', () => {
  it('shows a static route to another relay, and a card that names this relay', async () => {
    const routed = await runWmp(['--home', alice.home, '--json', 'route', 'did:web:corp.example:bob']);
    expect(routed.code).toBe(0);
    expect(json(routed)).toEqual({
      identity: 'did:web:corp.example:bob',
      relay: relay.url,
      home: 'https://relay.corp.example',
      source: 'route',
    });
    const here = await runWmp(['--home', alice.home, 'route', alice.did]);
    expect(here.code).toBe(0);
    expect(here.stdout).toContain(`is kept at ${relay.url} (the recipient's OHAN card)`);
  });
});
