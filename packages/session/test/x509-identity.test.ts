import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SessionError, signedChallengeAuthenticator, WmpSession } from '../src/index.js';
import { X509IdentityError, x5cAuthenticator, x509Identity } from '../src/x509.js';
import { harness } from './helpers.js';
import { issue, makePki, newKey, type TestPki } from './pki.js';

let pki: TestPki;
beforeAll(async () => {
  pki = await makePki();
});

const sha256Of = (der: Uint8Array) => new X509Certificate(der).fingerprint256.replaceAll(':', '').toLowerCase();

function server() {
  return harness({
    authenticators: {
      signed_challenge: signedChallengeAuthenticator(),
      x5c: x5cAuthenticator({ trustAnchors: pki.root.pem }),
    },
  });
}

describe('x509Identity and WmpSession over x5c', () => {
  it('loads a chain and key, and WmpSession.open authenticates with it', async () => {
    const identity = await x509Identity({
      certificatesPem: pki.dnsLeaf.pem + pki.intermediate.pem,
      privateKeyPem: pki.dnsLeaf.key.pkcs8Pem,
    });
    expect(identity.id).toBe('x509:san:dns:wallet.example.com');
    expect(identity.x5c).toEqual([pki.dnsLeaf.b64, pki.intermediate.b64]);
    const h = server();
    const session = await WmpSession.open(await h.connect(), { x509: identity, capabilities: { messaging: {} } });
    expect(session.sender).toBe('x509:san:dns:wallet.example.com');
    await expect(session.request('wmp.capability.list')).resolves.toMatchObject({ capabilities: { messaging: {} } });
    // RSA (RS256 chosen) and a URI identity.
    const rsa = await x509Identity({
      certificatesPem: pki.uriLeaf.pem + pki.intermediate.pem,
      privateKeyPem: pki.uriLeaf.key.pkcs8Pem,
      rsaAlgorithm: 'RS256',
    });
    expect(rsa.id).toBe('x509:san:uri:https://issuer.example.eu/wmp');
    expect(rsa.signer.alg).toBe('RS256');
    await expect(WmpSession.open(await h.connect(), { x509: rsa })).resolves.toBeInstanceOf(WmpSession);
    // An Ed25519 leaf, named by its fingerprint.
    const fp = `x509:sha256:${sha256Of(pki.edLeaf.der)}`;
    const ed = await x509Identity({
      certificatesPem: pki.edLeaf.pem + pki.intermediate.pem,
      privateKeyPem: pki.edLeaf.key.pkcs8Pem,
      id: fp,
    });
    expect((await WmpSession.open(await h.connect(), { x509: ed })).sender).toBe(fp);
  });

  it('refuses a key that is not the leaf’s, an id the leaf does not prove, and bad PEM', async () => {
    const certificatesPem = pki.dnsLeaf.pem + pki.intermediate.pem;
    const reasonOf = (options: Parameters<typeof x509Identity>[0]) =>
      x509Identity(options).then(
        () => 'ok',
        (e: unknown) => {
          expect(e).toBeInstanceOf(X509IdentityError);
          expect(e).toBeInstanceOf(SessionError);
          return (e as X509IdentityError).reason;
        },
      );
    expect(await reasonOf({ certificatesPem, privateKeyPem: pki.relayLeaf.key.pkcs8Pem })).toMatch(/^key_/);
    expect(await reasonOf({ certificatesPem, privateKeyPem: pki.uriLeaf.key.pkcs8Pem })).toMatch(/^key_/);
    const other = 'x509:san:dns:other.example';
    expect(await reasonOf({ certificatesPem, privateKeyPem: pki.dnsLeaf.key.pkcs8Pem, id: other })).toBe(
      'identity_not_proved',
    );
    // A fixed message: the identifier asked for is not in it.
    await expect(x509Identity({ certificatesPem, privateKeyPem: pki.dnsLeaf.key.pkcs8Pem, id: other })).rejects.toThrow(
      'the leaf certificate does not prove the identifier',
    );
    expect(await reasonOf({ certificatesPem: 'nothing', privateKeyPem: pki.dnsLeaf.key.pkcs8Pem })).toBe(
      'no_certificate',
    );
  });

  it('names itself by its first dNSName that is no wildcard, lower-case, and never by a wildcard', async () => {
    const key = newKey('p256');
    const leaf = await issue({
      subject: 'mixed',
      key,
      issuer: pki.intermediate,
      dns: ['*.Example.com', 'Wallet.Example.COM'],
      keyUsage: ['digitalSignature'],
    });
    const certificatesPem = leaf.pem + pki.intermediate.pem;
    const identity = await x509Identity({ certificatesPem, privateKeyPem: key.pkcs8Pem });
    expect(identity.id).toBe('x509:san:dns:wallet.example.com');
    expect((await WmpSession.open(await server().connect(), { x509: identity })).sender).toBe(identity.id);
    for (const id of ['x509:san:dns:*.example.com', 'x509:san:dns:Wallet.Example.COM']) {
      await expect(x509Identity({ certificatesPem, privateKeyPem: key.pkcs8Pem, id })).rejects.toThrow(
        X509IdentityError,
      );
    }
  });

  it('a session whose leaf the responder does not trust is refused', async () => {
    const foreign = await x509Identity({
      certificatesPem: pki.foreignLeaf.pem + pki.foreignRoot.pem,
      privateKeyPem: pki.foreignLeaf.key.pkcs8Pem,
    });
    await expect(WmpSession.open(await server().connect(), { x509: foreign })).rejects.toMatchObject({
      code: -31002,
      data: { reason: 'untrusted_chain' },
    });
  });
});

describe('@wmp/session without X.509', () => {
  it('does not load pkijs until @wmp/session/x509 is imported', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const script = [
      'const loaded = () => globalThis[process.pid]?.pkijs !== undefined;',
      "await import('@wmp/session');",
      'const before = loaded();',
      "await import('@wmp/session/x509');",
      'console.log(JSON.stringify([before, loaded()]));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['--conditions=@wmp/source', '--input-type=module', '-e', script],
      { cwd: new URL('../../../', import.meta.url).pathname, encoding: 'utf8', timeout: 50_000 },
    );
    expect(JSON.parse(stdout)).toEqual([false, true]);
  }, 60_000);
});
