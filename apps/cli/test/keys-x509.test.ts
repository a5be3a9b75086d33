// wmp with an X.509 identity, as child processes: keys import --cert --key, the identity shown,
// live messages to and from an x509:san:dns id through a relay with trust anchors, and what the
// relay proved to be.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePki, type TestPki } from '../../../packages/session/test/pki.js';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, json, removeWmpBuild, runWmp, startWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let pki: TestPki;
let relay: TestRelay;

beforeAll(async () => {
  pki = await makePki();
  [relay] = await Promise.all([startTestRelay({ trustAnchors: pki.root.pem }), buildWmp()]);
}, 120_000);
afterAll(async () => {
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

describe('wmp keys import --cert --key', () => {
  it('makes the home an x509:san:dns identity that sends and receives live messages by x5c', async () => {
    const wallet = homes.make('wallet');
    const cert = join(wallet, 'chain.pem');
    const key = join(wallet, 'key.pem');
    writeFileSync(cert, pki.dnsLeaf.pem + pki.intermediate.pem);
    writeFileSync(key, pki.dnsLeaf.key.pkcs8Pem);
    const imported = await runWmp(['--home', wallet, '--json', 'keys', 'import', '--cert', cert, '--key', key]);
    expect(imported.code).toBe(0);
    expect(json(imported)).toMatchObject({
      id: 'x509:san:dns:wallet.example.com',
      did: expect.stringMatching(/^did:key:/),
    });
    const shown = await runWmp(['--home', wallet, 'keys', 'show']);
    expect(shown.stdout).toMatch(/^id +x509:san:dns:wallet\.example\.com \(X\.509\)$/m);

    // A did:key user sends to the x509 id; the wallet receives it.
    const alice = homes.make('alice');
    expect((await runWmp(['--home', alice, 'keys', 'new'])).code).toBe(0);
    const sent = await runWmp([
      '--home',
      alice,
      '--json',
      'send',
      'x509:san:dns:wallet.example.com',
      'hello wallet',
      '--relay',
      relay.url,
    ]);
    expect(sent.code).toBe(0);
    expect(json(sent)).toMatchObject({ to: 'x509:san:dns:wallet.example.com', relay_id: relay.id, status: 'queued' });
    const human = await runWmp([
      '--home',
      alice,
      'send',
      'x509:san:dns:wallet.example.com',
      'again',
      '--relay',
      relay.url,
    ]);
    expect(human.stderr).toContain(`the relay proved to be ${relay.id}`);
    const listen = startWmp(['--home', wallet, 'listen', '--relay', relay.url, '--count', '1']);
    await listen.waitForStdout(/hello wallet\n/);
    expect((await listen.ended()).code).toBe(0);

    // The wallet's own REPL says who it is and who the relay proved to be.
    const repl = await runWmp(['--home', wallet, 'connect', relay.url], { input: 'status\nquit\n' });
    expect(repl.code).toBe(0);
    expect(repl.stdout).toMatch(/^you +x509:san:dns:wallet\.example\.com$/m);
    expect(repl.stdout).toMatch(new RegExp(`^relay id +${relay.id}$`, 'm'));
  }, 120_000);

  it('refuses --cert without --key, and files that are not a chain and its key', async () => {
    const home = homes.make('bad');
    const garbage = join(home, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate');
    const lone = await runWmp(['--home', home, 'keys', 'import', '--cert', garbage]);
    expect(lone.code).toBe(2);
    expect(lone.stderr).toContain('--cert and --key go together');
    const bad = await runWmp(['--home', home, 'keys', 'import', '--cert', garbage, '--key', garbage]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('are not a certificate chain and the private key of its first certificate');
    const missing = await runWmp([
      '--home',
      home,
      'keys',
      'import',
      '--cert',
      join(home, 'nope.pem'),
      '--key',
      garbage,
    ]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('no file');
  }, 60_000);
});
