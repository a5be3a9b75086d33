// wmp-relay --assertion-policy, as a real process (core §5.6): a session authenticates only with
// an SD-JWT VC presentation that meets the policy (a required `given_name`, issuers trusted as a
// DID or through a PEM anchors file), bound to that session's challenge and id; every refusal is
// -31012 with its reason. The relay also answers `wmp.resolve` `endpoint` for identities at home
// on it. A policy file that cannot be used stops the start (exit 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { b64urlDecode, b64urlEncode, fromUtf8, utf8 } from '@wmp/jcs-signing';
import { type SessionBindingInfo, WmpSession } from '@wmp/session';
import { sdJwtAssertion } from '@wmp/session/sd-jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../../../packages/session/test/auth-helpers.js';
import {
  type DidIssuer,
  didIssuer,
  holderKey,
  type X509Issuer,
  x509Issuer,
} from '../../../packages/session/test/sd-jwt-fixtures.js';
import {
  CLIENT_CAPABILITIES,
  connectPeer,
  type RelayProcess,
  runRelay,
  startRelayProcess,
} from './fixtures/relay-process.js';

let dir: string;
let relay: RelayProcess;
let issuer: DidIssuer;
let x509: X509Issuer;
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wmp-relay-assertions-'));
  issuer = didIssuer();
  x509 = await x509Issuer();
  file('issuer-cas.pem', x509.pki.root.pem);
  const policy = file(
    'policy.json',
    JSON.stringify({
      formats: ['vc+sd-jwt'],
      required_claims: ['given_name'],
      trusted_issuers: [issuer.did, 'issuer-cas.pem'],
    }),
  );
  relay = await startRelayProcess(['--ephemeral', '--port', '0', '--assertion-policy', policy], { timeoutMs: 60_000 });
}, 90_000);

afterAll(async () => {
  relay?.child.kill('SIGTERM');
  await relay?.exited;
  rmSync(dir, { recursive: true, force: true });
});

type Present = (binding: SessionBindingInfo) => Promise<readonly unknown[]> | readonly unknown[];

/** Opens a session at the relay as `holder`, presenting what `present` makes for it. */
async function open(holder: ReturnType<typeof holderKey>, present?: Present) {
  const peer = await connectPeer(relay.url);
  try {
    const session = await WmpSession.open(peer, {
      signer: holder.keypair,
      capabilities: { ...CLIENT_CAPABILITIES, resolve: {} },
      ...(present ? { identityAssertions: present } : {}),
    });
    return { peer, session };
  } catch (e) {
    await peer.close();
    throw e;
  }
}

const bound =
  (credential: string, holder: ReturnType<typeof holderKey>, over: { audience?: string } = {}): Present =>
  async ({ sessionId, challenge }) =>
    [
      await sdJwtAssertion(credential, {
        disclose: ['given_name'],
        nonce: challenge,
        audience: over.audience ?? sessionId,
        holder,
      }),
    ].map((a) => ({ ...a, audience: sessionId }));

const reason = async (p: Promise<unknown>) => {
  const r = await refusal(p);
  return r === 'ok' ? 'ok' : { code: r.code, reason: (r.data as { reason?: string }).reason };
};

describe('wmp-relay --assertion-policy', () => {
  it('refuses an authenticate without an assertion: -31012 insufficient_claims with required_claims', async () => {
    const r = await refusal(open(holderKey()));
    expect(r).toMatchObject({
      code: -31012,
      data: {
        reason: 'insufficient_claims',
        required_claims: ['given_name'],
        accepted_formats: ['vc+sd-jwt'],
        accepted_trust_frameworks: ['x509_pki'],
      },
    });
  });

  it('accepts a valid presentation (did:key issuer, then an x5c issuer under the anchors file); the session works', async () => {
    const holder = holderKey();
    const { peer, session } = await open(holder, bound(await issuer.issue(holder), holder));
    await expect(session.request('wmp.relay.register', {})).resolves.toMatchObject({ registered: true });
    // resolve `endpoint`: an identity at home here gets the relay's own well-known document.
    const answer = (await session.request('wmp.resolve', { type: 'endpoint', uri: holder.keypair.did })) as Record<
      string,
      any
    >;
    expect(answer).toMatchObject({
      type: 'endpoint',
      content_type: 'application/json',
      trust_info: { source: 'local' },
    });
    expect(answer.body.endpoints.websocket).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/wmp$/);
    expect(answer.metadata).toEqual(answer.body);
    const stranger = (await session.request('wmp.resolve', { type: 'endpoint', uri: 'did:key:z6MkUnknown' })) as Record<
      string,
      unknown
    >;
    expect(stranger.metadata).toBeNull();
    await peer.close();

    const other = holderKey();
    const viaX509 = await open(other, bound(await x509.issue(other), other));
    await viaX509.peer.close();
  });

  it('refuses a presentation replayed into another session, a wrong audience, an expired or tampered credential, an untrusted issuer', async () => {
    const holder = holderKey();
    const credential = await issuer.issue(holder);
    let first: readonly unknown[] = [];
    const { peer } = await open(holder, async (binding) => {
      first = await bound(credential, holder)(binding);
      return first;
    });
    await peer.close();
    expect(await reason(open(holder, () => first))).toEqual({ code: -31012, reason: 'invalid_proof' });

    // The key binding JWT names another audience (the assertion's own member says this session).
    expect(await reason(open(holder, bound(credential, holder, { audience: 'ses-someoneElse' })))).toEqual({
      code: -31012,
      reason: 'invalid_proof',
    });

    const expired = await issuer.issue(holder, { expiresAt: Date.now() - 3600_000 });
    expect(await reason(open(holder, bound(expired, holder)))).toEqual({ code: -31012, reason: 'expired' });

    // given_name changed in the issuer-signed payload.
    const [jwt, ...rest] = credential.split('~');
    const [h, p, s] = jwt!.split('.');
    const claims = JSON.parse(fromUtf8(b64urlDecode(p!))) as Record<string, unknown>;
    const tampered = [
      [h, b64urlEncode(utf8(JSON.stringify({ ...claims, given_name: 'Mallory' }))), s].join('.'),
      ...rest,
    ].join('~');
    expect(await reason(open(holder, bound(tampered, holder)))).toEqual({ code: -31012, reason: 'invalid_proof' });

    const strangerIssued = await didIssuer().issue(holder);
    expect(await reason(open(holder, bound(strangerIssued, holder)))).toEqual({
      code: -31012,
      reason: 'untrusted_issuer',
    });
  });

  it('a policy file that cannot be used stops the start, naming the flag', async () => {
    const cases: [string, string][] = [
      [file('bad.json', '{ nope'), '--assertion-policy: the file is not JSON'],
      [file('unknown.json', JSON.stringify({ trusted_issuers: [issuer.did], claims: [] })), 'unknown member "claims"'],
      [file('nobody.json', JSON.stringify({ required_claims: ['given_name'] })), 'names no issuer'],
      [file('mdoc.json', JSON.stringify({ formats: ['mso_mdoc'], trusted_issuers: [issuer.did] })), 'mso_mdoc'],
      [file('nopem.json', JSON.stringify({ trusted_issuers: ['missing.pem'] })), 'cannot read'],
    ];
    for (const [path, message] of cases) {
      const result = await runRelay(['--ephemeral', '--port', '0', '--assertion-policy', path]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(message);
    }
  }, 120_000);
});
