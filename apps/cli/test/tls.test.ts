// TLS with a private CA and mTLS, as child processes against a wmp-relay process that serves
// TLS itself (--tls-cert, --tls-key, --tls-client-ca and no --trust-anchors: an X.509 identity
// can only authenticate by its client certificate there). Without the CA, every command says it
// is a certificate problem (exit 5) and which; with --ca-file (or WMP_CA_FILE) the box calls,
// WSS and live messages work; with --mtls the X.509 identity of `wmp keys import --cert --key`
// is presented and authenticates. The TLS error classes a relay cannot show (a self-signed
// certificate, one for another host name) come from TLS servers in the test process.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issue, makePki, newKey, type TestPki } from '../../../packages/session/test/pki.js';
import type { RelayProcess } from '../../relay/test/fixtures/relay-process.js';
import { startTlsRelayProcess } from '../../relay/test/fixtures/tls-relay-process.js';
import { publishedUser } from './fixtures/cli-users.js';
import { buildWmp, json, removeWmpBuild, runWmp, startWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let pki: TestPki;
let files: string;
let relay: RelayProcess;
let ca: string;
const WALLET = 'x509:san:dns:wallet.example.com';

function file(name: string, text: string): string {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
}

const user = (name: string) => publishedUser(homes, name, relay.url, ['--ca-file', ca]);

/** An HTTPS server in this process with `cert` (PEM chain) and `key`; answers 404 to anything. */
async function tlsServer(cert: string, key: string): Promise<{ url: string; server: Server }> {
  const server = createServer({ cert, key }, (_req, res) => res.writeHead(404).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  [pki] = await Promise.all([makePki(), buildWmp()]);
  files = homes.make('pki');
  ca = file('ca.pem', pki.root.pem);
  ({ relay } = await startTlsRelayProcess(pki, file));
}, 120_000);

afterAll(async () => {
  relay?.child.kill('SIGTERM');
  await relay?.exited;
  homes.cleanup();
  removeWmpBuild();
});

describe('a relay with a certificate from a private CA', () => {
  it('without the CA: exit 5, a certificate problem named by its class, for box calls and live ones', async () => {
    const home = homes.make('untrusting');
    const made = json(await runWmp(['--home', home, '--json', 'keys', 'new']));
    const publish = await runWmp(['--home', home, 'card', 'publish', '--relay', relay.url]);
    expect(publish).toMatchObject({ code: 5, stdout: '' });
    expect(publish.stderr).toMatch(
      new RegExp(
        `^wmp: TLS failed with ${relay.url}: the relay's certificate is issued by an unknown CA \\(UNABLE_TO_GET_ISSUER_CERT_LOCALLY\\)\\n` +
          'If the relay uses a private CA, trust it: --ca-file <ca.pem> \\(or WMP_CA_FILE\\).\\n$',
      ),
    );
    // Retrying cannot help, so a live command does not retry: at once, the same class.
    const send = await runWmp(['--home', home, '--json', 'send', made.did, 'hi', '--relay', relay.url]);
    expect(send.code).toBe(5);
    expect(JSON.parse(send.stderr).error).toMatchObject({
      code: 'tls',
      exit: 5,
      message: `TLS failed with ${relay.url}: the relay's certificate is issued by an unknown CA (UNABLE_TO_GET_ISSUER_CERT_LOCALLY)`,
      details: { tls: 'unknown_ca', tls_code: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', relay: relay.url },
    });
    const unreadable = await runWmp(['--home', home, '--ca-file', join(files, 'nope.pem'), 'card', 'publish']);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain(`--ca-file: cannot read ${join(files, 'nope.pem')} (ENOENT)`);
    const notPem = await runWmp(['--home', home, 'listen', '--relay', relay.url], {
      env: { WMP_CA_FILE: file('garbage.pem', 'not a certificate') },
    });
    expect(notPem.code).toBe(2);
    expect(notPem.stderr).toContain(`WMP_CA_FILE: ${join(files, 'garbage.pem')} holds no PEM certificate`);
  }, 60_000);

  it('with --ca-file or WMP_CA_FILE: cards, live messages over WSS and sealed mail work', async () => {
    const [alice, bob] = [await user('alice'), await user('bob')];
    const env = { WMP_CA_FILE: ca };
    const listen = startWmp(['--home', bob.home, 'listen', '--count', '1'], { env });
    await listen.waitForStderr(/^listening as did:key:\S+ on https:\/\/127\.0\.0\.1:\d+ \(Ctrl-C to stop\)$/m);
    const sent = await runWmp(['--home', alice.home, '--json', 'send', bob.did, 'over', 'tls', '--wait'], { env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(json(sent)).toMatchObject({ relay: relay.url, status: 'delivered' });
    await listen.waitForStdout(/over tls\n/);
    expect((await listen.ended()).code).toBe(0);

    const mailed = await runWmp(['--home', alice.home, '--ca-file', ca, 'mail', 'send', bob.did, 'sealed']);
    expect(mailed.code, mailed.stderr).toBe(0);
    const fetched = await runWmp(['--home', bob.home, '--json', 'mail', 'fetch'], { env });
    expect(json(fetched).messages).toMatchObject([{ from: alice.did, body: { text: 'sealed' } }]);
  }, 120_000);
});

describe('mTLS at the relay', () => {
  it('--mtls presents the X.509 identity (wmp keys import --cert --key) as the client certificate', async () => {
    const alice = await user('mtls-alice');
    const wallet = homes.make('wallet');
    const chain = file('wallet-chain.pem', pki.dnsLeaf.pem + pki.intermediate.pem);
    const key = file('wallet-key.pem', pki.dnsLeaf.key.pkcs8Pem);
    expect((await runWmp(['--home', wallet, 'keys', 'import', '--cert', chain, '--key', key])).code).toBe(0);
    const args = ['--home', wallet, '--ca-file', ca, 'send', alice.did, 'from', 'the', 'wallet', '--relay', relay.url];

    // This relay has no trust anchors for x5c: by the certificate in the handshake or not at all.
    const byX5c = await runWmp(args);
    expect(byX5c.code).toBe(1);
    expect(byX5c.stderr).toContain('(-31002');
    const byMtls = await runWmp(['--mtls', ...args]);
    expect(byMtls.code, byMtls.stderr).toBe(0);
    // Named explicitly, the same files do the same.
    const explicit = await runWmp(['--mtls', '--client-cert', chain, '--client-key', key, ...args]);
    expect(explicit.code, explicit.stderr).toBe(0);
    const got = await runWmp(['--home', alice.home, '--ca-file', ca, '--json', 'listen', '--count', '2']);
    expect(
      got.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).from),
    ).toEqual([WALLET, WALLET]);

    const mismatched = await runWmp([
      '--client-cert',
      chain,
      '--client-key',
      file('other-key.pem', pki.uriLeaf.key.pkcs8Pem),
      ...args,
    ]);
    expect(mismatched.code).toBe(2);
    expect(mismatched.stderr).toContain(`is not the key of the first certificate in ${chain}`);
    const lone = await runWmp(['--client-cert', chain, ...args]);
    expect(lone.code).toBe(2);
    expect(lone.stderr).toContain('--client-cert and --client-key go together');
    const noX509 = await runWmp(['--home', alice.home, '--mtls', 'send', alice.did, 'hi', '--relay', relay.url]);
    expect(noX509.code).toBe(2);
    expect(noX509.stderr).toContain('--mtls: this identity has no X.509 certificate');
  }, 120_000);
});

describe('TLS failures by class', () => {
  it('a self-signed certificate and one for another host name are each named, exit 5', async () => {
    const home = homes.make('classes');
    const made = json(await runWmp(['--home', home, '--json', 'keys', 'new']));
    const selfKey = newKey('p256');
    const self = await issue({ subject: 'self', key: selfKey, dns: ['localhost'], ips: ['127.0.0.1'] });
    const other = await issue({
      subject: 'elsewhere',
      key: newKey('p256'),
      issuer: pki.intermediate,
      dns: ['relay.example.net'],
      keyUsage: ['digitalSignature'],
    });
    const servers = [
      await tlsServer(self.pem, selfKey.pkcs8Pem),
      await tlsServer(other.pem + pki.intermediate.pem, other.key.pkcs8Pem),
    ];
    try {
      const run = (url: string) => runWmp(['--home', home, '--ca-file', ca, 'send', made.did, 'hi', '--relay', url]);
      const selfSigned = await run(servers[0]!.url);
      expect(selfSigned.code).toBe(5);
      expect(selfSigned.stderr).toContain(
        `TLS failed with ${servers[0]!.url}: the relay's certificate is self-signed (not trusted here) (DEPTH_ZERO_SELF_SIGNED_CERT)`,
      );
      const mismatch = await run(servers[1]!.url);
      expect(mismatch.code).toBe(5);
      expect(mismatch.stderr).toContain(
        `TLS failed with ${servers[1]!.url}: the relay's certificate is for another host name (ERR_TLS_CERT_ALTNAME_INVALID)`,
      );
    } finally {
      for (const s of servers) s.server.close();
    }
  }, 60_000);
});
