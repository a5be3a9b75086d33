// wmp-relay with --tls-cert/--tls-key/--tls-client-ca and --trust-anchors, as a real process:
// it serves HTTPS and WSS, authenticates an x509:san:dns client by x5c and by its TLS client
// certificate, proves itself as its relay_id, and refuses unusable files at start (exit 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair } from '@wmp/jcs-signing';
import { WmpSession } from '@wmp/session';
import { x509Identity } from '@wmp/session/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientCredentials,
  connectTlsPeer,
  tlsFetch,
} from '../../../packages/relay-server/test/fixtures/tls-clients.js';
import { issue, makePki, newKey, type TestCert, type TestPki } from '../../../packages/session/test/pki.js';
import { authSettings } from '../src/auth-config.js';
import { type ParseResult, parseConfig } from '../src/config.js';
import { type RelayProcess, runRelay } from './fixtures/relay-process.js';
import { startTlsRelayProcess } from './fixtures/tls-relay-process.js';

let pki: TestPki;
let serverLeaf: TestCert;
let dir: string;
let relay: RelayProcess;
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

beforeAll(async () => {
  pki = await makePki();
  dir = mkdtempSync(join(tmpdir(), 'wmp-relay-tls-'));
  ({ relay, leaf: serverLeaf } = await startTlsRelayProcess(pki, file, [
    '--trust-anchors',
    file('anchors.pem', pki.root.pem),
  ]));
}, 120_000);

afterAll(async () => {
  relay?.child.kill('SIGTERM');
  await relay?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('wmp-relay serving TLS itself', () => {
  it('prints an https URL and lists x509 schemes in accepted_schemes', async () => {
    expect(relay.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const wellKnown = await (await tlsFetch({ ca: pki.root.pem })(`${relay.url}/.well-known/wmp-configuration`)).json();
    expect(wellKnown.accepted_schemes).toEqual(['did', 'x509']);
    expect(wellKnown.accepted_identifier_schemes).toEqual([
      'did:jwk',
      'did:key',
      'x509:san:dns',
      'x509:san:uri',
      'x509:sha256',
    ]);
    expect(wellKnown.endpoints.websocket).toBe(`${relay.url.replace('https', 'wss')}/wmp`);
  });

  it('authenticates x509:san:dns by x5c over WSS and by mtls over HTTPS + SSE, and proves its relay_id', async () => {
    const relayId = (await (await tlsFetch({ ca: pki.root.pem })(`${relay.url}/.well-known/wmp-configuration`)).json())
      .relay_id as string;
    const wallet = await x509Identity({
      certificatesPem: pki.dnsLeaf.pem + pki.intermediate.pem,
      privateKeyPem: pki.dnsLeaf.key.pkcs8Pem,
    });
    const byX5c = await WmpSession.open(await connectTlsPeer(relay.url, 'ws', { ca: pki.root.pem }), {
      x509: wallet,
      verifyResponder: { id: relayId },
    });
    expect(byX5c.sender).toBe('x509:san:dns:wallet.example.com');
    const byMtls = await WmpSession.open(
      await connectTlsPeer(relay.url, 'http', clientCredentials(pki, pki.dnsLeaf, pki.root.pem)),
      { sender: 'x509:san:dns:wallet.example.com', auth: { type: 'mtls' }, verifyResponder: { id: relayId } },
    );
    expect(byMtls.sender).toBe('x509:san:dns:wallet.example.com');
    // A client that pinned another relay's id refuses this one.
    await expect(
      WmpSession.open(await connectTlsPeer(relay.url, 'ws', { ca: pki.root.pem }), {
        signer: generateKeypair(),
        verifyResponder: { id: generateKeypair().did },
      }),
    ).rejects.toMatchObject({ code: -31002, data: { reason: 'responder_auth_failed' } });
    await byX5c.close();
    await byMtls.close();
  });
});

describe('mtls at wmp-relay: a client certificate is for clients (RFC 5280 extKeyUsage)', () => {
  it('refuses the relay’s own server certificate and a serverAuth-only one, and still serves', async () => {
    const serverOnly = await issue({
      subject: 'server only',
      key: newKey('p256'),
      issuer: pki.intermediate,
      dns: ['server-only.example.com'],
      keyUsage: ['digitalSignature'],
      extKeyUsage: ['serverAuth'],
    });
    const mtls = async (leaf: TestCert, sender: string) => {
      try {
        const session = await WmpSession.open(
          await connectTlsPeer(relay.url, 'ws', clientCredentials(pki, leaf, pki.root.pem)),
          { sender, auth: { type: 'mtls' } },
        );
        await session.close();
        return 'ok';
      } catch (e) {
        return { code: (e as { code?: unknown }).code, data: (e as { data?: unknown }).data };
      }
    };
    const wrongPurpose = { code: -31002, data: { reason: 'untrusted_chain', detail: 'extended_key_usage' } };
    expect(await mtls(serverLeaf, 'x509:san:dns:localhost')).toEqual(wrongPurpose);
    expect(await mtls(serverOnly, 'x509:san:dns:server-only.example.com')).toEqual(wrongPurpose);
    expect(await mtls(pki.dnsLeaf, 'x509:san:dns:wallet.example.com')).toBe('ok');
  });
});

describe('authentication flags', () => {
  const parsed = (argv: string[]): ParseResult => parseConfig(argv, {});

  it('parses the flags and their variables, and refuses combinations that cannot work', () => {
    const result = parsed(['--trust-anchors', 'a.pem', '--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--did-web']);
    expect(result).toMatchObject({
      kind: 'config',
      config: { auth: { trustAnchorsFile: 'a.pem', tlsCertFile: 'c.pem', tlsKeyFile: 'k.pem', didWeb: true } },
    });
    // One flag for every fetch on a client's behalf: did:web documents and federation alike.
    expect(parseConfig([], { WMP_DID_WEB_TIMEOUT: '2', WMP_ALLOW_PRIVATE_PEERS: '1' })).toMatchObject({
      config: { auth: { didWebTimeoutMs: 2000, allowPrivatePeers: true }, federation: { allowPrivatePeers: true } },
    });
    expect(parsed(['--allow-private-peers'])).toMatchObject({
      config: { auth: { allowPrivatePeers: true }, federation: { allowPrivatePeers: true } },
    });
    // The did:web-only flag it replaces says so.
    for (const result of [parsed(['--did-web-allow-private']), parseConfig([], { WMP_DID_WEB_ALLOW_PRIVATE: '1' })]) {
      expect(result).toMatchObject({ kind: 'error', message: /replaced by --allow-private-peers/ });
    }
    expect(parsed(['--tls-cert', 'c.pem'])).toEqual({ kind: 'error', message: '--tls-cert and --tls-key go together' });
    expect(parsed(['--tls-client-ca', 'ca.pem'])).toMatchObject({ kind: 'error', message: /needs --tls-cert/ });
    expect(parsed(['--did-web-max-bytes', '100'])).toMatchObject({ kind: 'error', message: /out of range/ });
    expect(() => authSettings({ text: () => ' ', bool: () => undefined, number: () => undefined }, fail)).toThrow(
      '--trust-anchors: must not be empty',
    );
  });

  it('stops with exit 2 naming the flag for a missing file, a file without PEM, or PEM that is no certificate', async () => {
    const garbage = file('garbage.pem', 'not a certificate');
    const notCert = file('not-cert.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const cases: [string[], string][] = [
      [['--trust-anchors', join(dir, 'missing.pem')], '--trust-anchors: cannot read the file'],
      [['--trust-anchors', garbage], '--trust-anchors: the file holds no PEM block'],
      [['--trust-anchors', notCert], '--trust-anchors: the file holds no valid certificate'],
    ];
    for (const [args, message] of cases) {
      const run = await runRelay(['--ephemeral', '--port', '0', ...args]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
    }
  }, 120_000);
});

function fail(message: string): never {
  throw new Error(message);
}
