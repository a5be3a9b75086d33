// wmp as a child process: identities in temp homes, cards on a directory relay and on a
// relay-only one, the config directory default, and the exit codes of each failure kind.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedUrl, startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let directory: TestRelay;
let relayOnly: TestRelay;

beforeAll(async () => {
  [directory, relayOnly] = await Promise.all([startTestRelay(), startTestRelay({ directory: false }), buildWmp()]);
});
afterAll(async () => {
  await Promise.all([directory?.close(), relayOnly?.close()]);
  homes.cleanup();
  removeWmpBuild();
});

describe('wmp keys', () => {
  it('new, show, export and import; a second new is refused; files are private', async () => {
    const alice = homes.make('alice');
    const made = await runWmp(['--home', alice, '--json', 'keys', 'new']);
    expect(made.code).toBe(0);
    const id = json(made);
    expect(id.did).toMatch(/^did:key:z6Mk/);
    expect(id.signing_key).toBe(id.did.slice('did:key:'.length));
    expect(id.enc_key).toMatch(/^z6LS/);
    expect(id.home).toBe(alice);
    expect(statSync(alice).mode & 0o777).toBe(0o700);
    expect(statSync(join(alice, 'store', 'identity')).mode & 0o777).toBe(0o600);

    const again = await runWmp(['--home', alice, 'keys', 'new']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`already has an identity (${id.did})`);
    expect(again.stderr).toContain('wmp keys new --force');

    const shown = json(await runWmp(['--home', alice, '--json', 'keys', 'show']));
    expect(shown).toEqual({ ...id, relays: [] });
    const human = await runWmp(['--home', alice, 'keys', 'show']);
    expect(human.stdout).toMatch(new RegExp(`^did +${id.did}$`, 'm'));

    const file = join(alice, 'backup.json');
    const exported = await runWmp(['--home', alice, 'keys', 'export', '--out', file]);
    expect(exported.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ version: 1, did: id.did });
    // Never overwritten.
    expect((await runWmp(['--home', alice, 'keys', 'export', '--out', file])).code).toBe(1);

    const laptop = homes.make('laptop');
    const imported = await runWmp(['--home', laptop, '--json', 'keys', 'import', '-'], {
      input: readFileSync(file, 'utf8'),
    });
    expect(imported.code).toBe(0);
    expect(json(imported).did).toBe(id.did);

    writeFileSync(join(laptop, 'bad.json'), '{"version":1,"did":"did:key:z6MkX"}');
    const bad = await runWmp(['--home', laptop, 'keys', 'import', join(laptop, 'bad.json'), '--force']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('is not an identity written by wmp keys export');
    expect((await runWmp(['--home', laptop, 'keys', 'import', join(laptop, 'missing.json')])).code).toBe(3);
  });

  it('the home defaults to $XDG_CONFIG_HOME/wmp, else ~/.config/wmp; a home without keys is exit 3', async () => {
    const xdg = homes.make('xdg');
    const home = homes.make('home');
    const [viaXdg, viaHome] = await Promise.all([
      runWmp(['--json', 'keys', 'new'], { env: { XDG_CONFIG_HOME: xdg, HOME: home } }),
      runWmp(['--json', 'keys', 'new'], { env: { HOME: home } }),
    ]);
    expect(json(viaXdg).home).toBe(join(xdg, 'wmp'));
    expect(json(viaHome).home).toBe(join(home, '.config', 'wmp'));
    const viaEnv = await runWmp(['--json', 'keys', 'show'], { env: { WMP_HOME: join(xdg, 'wmp'), HOME: home } });
    expect(json(viaEnv).did).toBe(json(viaXdg).did);

    const empty = await runWmp(['--home', homes.make('empty'), '--json', 'keys', 'show']);
    expect(empty.code).toBe(3);
    expect(empty.stdout).toBe('');
    expect(JSON.parse(empty.stderr).error).toMatchObject({
      code: 'not_found',
      exit: 3,
      hint: expect.stringContaining('wmp keys new'),
    });
  });
});

describe('a home inside a git checkout', () => {
  it('is ignored by git: wmp writes a .gitignore into the directories it makes, nowhere else', async () => {
    const repo = homes.make('checkout');
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, 'README'), 'mine\n');
    const made = await runWmp(['--home', join(repo, 'alice'), 'keys', 'new']);
    expect(made.code).toBe(0);
    expect(readFileSync(join(repo, 'alice', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    // A directory that was there already gets it in store/ (wmp made that one), not at its top.
    mkdirSync(join(repo, 'bob'));
    writeFileSync(join(repo, 'bob', 'notes.txt'), 'not wmp\n');
    expect((await runWmp(['--home', join(repo, 'bob'), 'keys', 'new'])).code).toBe(0);
    expect(existsSync(join(repo, 'bob', '.gitignore'))).toBe(false);
    const status = execFileSync('git', ['-C', repo, 'status', '--porcelain', '--untracked-files=all'], {
      encoding: 'utf8',
    });
    expect(status.split('\n').filter(Boolean).sort()).toEqual(['?? README', '?? bob/notes.txt']);
  });
});

describe('wmp card', () => {
  it('publishes to a directory relay, is looked up and stored as a contact by another home', async () => {
    const alice = homes.make('alice');
    const bob = homes.make('bob');
    const [a, b] = await Promise.all([
      runWmp(['--home', alice, '--json', 'keys', 'new']),
      runWmp(['--home', bob, '--json', 'keys', 'new']),
    ]);
    const aliceDid = json(a).did;

    const published = await runWmp(['--home', alice, '--json', 'card', 'publish', '--relay', directory.url]);
    expect(published.code).toBe(0);
    const p = json(published);
    expect(p.did).toBe(aliceDid);
    expect(p.card).toMatchObject({ protocol: 'ohan.card.1', relays: [directory.url], key: json(a).signing_key });
    expect(p.relays).toEqual([{ relay: directory.url, ok: true, status: 'stored' }]);

    // Publishing again without --relay re-signs the card for the same relays.
    const again = json(await runWmp(['--home', alice, '--json', 'card', 'publish']));
    expect(again.card.relays).toEqual([directory.url]);
    expect(json(await runWmp(['--home', alice, '--json', 'keys', 'show'])).relays).toEqual([directory.url]);

    const found = await runWmp(['--home', bob, '--json', 'card', 'show', aliceDid, '--relay', directory.url]);
    expect(found.code).toBe(0);
    expect(json(found)).toEqual(again.card);
    // Stored: shown again without any relay.
    expect(json(await runWmp(['--home', bob, '--json', 'card', 'show', aliceDid]))).toEqual(again.card);

    const nobody = await runWmp(['--home', bob, 'card', 'show', json(b).did.slice(0, 20), '--relay', directory.url]);
    expect(nobody.code).toBe(2);
    const unknown = await runWmp(['--home', alice, 'card', 'show', json(b).did, '--relay', directory.url]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain(`no card for ${json(b).did} at ${directory.url}`);
  });

  it('on a relay-only box: publish says there is no directory, and the card travels as a file', async () => {
    const carol = homes.make('carol');
    const dave = homes.make('dave');
    await Promise.all([runWmp(['--home', carol, 'keys', 'new']), runWmp(['--home', dave, 'keys', 'new'])]);
    const published = await runWmp(['--home', carol, 'card', 'publish', '--relay', relayOnly.url]);
    expect(published.code).toBe(0);
    expect(published.stdout).toContain(`${relayOnly.url}  relay-only (no directory)`);

    const card = await runWmp(['--home', carol, '--json', 'card', 'show']);
    const file = join(dave, 'carol-card.json');
    writeFileSync(file, card.stdout);
    const imported = await runWmp(['--home', dave, '--json', 'card', 'import', file]);
    expect(imported.code).toBe(0);
    expect(json(imported).card).toEqual(json(card));

    writeFileSync(file, card.stdout.replace('"relays":["', '"relays":["https://evil.example","'));
    const forged = await runWmp(['--home', dave, 'card', 'import', file]);
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain('is not a valid signed card (signature)');
  });

  it('an unreachable relay is exit 4 and says what to check; the card no relay took is not saved', async () => {
    const erin = homes.make('erin');
    const made = json(await runWmp(['--home', erin, '--json', 'keys', 'new']));
    expect((await runWmp(['--home', erin, 'card', 'publish', '--relay', directory.url])).code).toBe(0);
    const nowhere = await closedUrl();
    const down = await runWmp(['--home', erin, 'card', 'publish', '--relay', nowhere]);
    expect(down.code).toBe(4);
    expect(down.stderr).toBe(
      `wmp: card not published (nothing saved): box unreachable at ${nowhere} (ECONNREFUSED)\n` +
        'Check the URL and that the relay is running (npm start starts one on http://127.0.0.1:8080).\n',
    );
    // The card (and with it the relay the live commands default to) is still the published one.
    expect(json(await runWmp(['--home', erin, '--json', 'keys', 'show'])).relays).toEqual([directory.url]);
    expect(json(await runWmp(['--home', erin, '--json', 'card', 'show'])).relays).toEqual([directory.url]);
    const routed = await runWmp(['--home', erin, '--json', 'route', made.did]);
    expect(routed.code).toBe(0);
    expect(json(routed)).toMatchObject({ identity: made.did, relay: directory.url, home: 'here' });

    // One relay of two took it: that card is the one the world sees, so it is kept (with a warning).
    const half = await runWmp(['--home', erin, 'card', 'publish', '--relay', directory.url, '--relay', nowhere]);
    expect(half.code).toBe(0);
    expect(half.stderr).toContain(`wmp: warning: box unreachable at ${nowhere} (ECONNREFUSED)`);
    expect(json(await runWmp(['--home', erin, '--json', 'keys', 'show'])).relays).toEqual([directory.url, nowhere]);
  });
});
