// The SD-JWT VC relying party (core §5.6): every -31012 reason of wmp-tables §2.4, on credentials
// made by the tests' own issuers (did:key, X.509 under the test PKI, an https issuer with a JWKS
// and token status lists on a local server).
import { b64urlDecode, b64urlEncode, fromUtf8, utf8 } from '@wmp/jcs-signing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssertionContext } from '../src/index.js';
import { credentialInfo, sdJwtAssertion, sdJwtAssertionChecker } from '../src/sd-jwt.js';
import { refusal } from './auth-helpers.js';
import {
  didIssuer,
  holderKey,
  plainFetch,
  VCT,
  type WebIssuer,
  webIssuer,
  type X509Issuer,
  x509Issuer,
} from './sd-jwt-fixtures.js';

const SESSION = 'ses-A1b2C3';
const NONCE = 'ch-9f8e7d6c5b4a';
const context = (over: Partial<AssertionContext> = {}): AssertionContext => ({
  nonce: NONCE,
  audiences: [SESSION],
  presenter: 'did:key:zpresenter',
  now: Date.now(),
  ...over,
});

const holder = holderKey();
const issuer = didIssuer();
const policy = { requiredClaims: ['given_name'], trustedIssuers: [issuer.did] };
const present = (credential: string, disclose = ['given_name'], over: Record<string, unknown> = {}) =>
  sdJwtAssertion(credential, { disclose, nonce: NONCE, audience: SESSION, holder, ...over });

/** The reason of a -31012, checking the §2.4 diagnostics come with it and nothing else. */
async function reasonOf(p: Promise<unknown>): Promise<string> {
  const r = await refusal(p);
  if (r === 'ok') return 'ok';
  expect(r.code).toBe(-31012);
  expect(Object.keys(r.data as object).sort()).toEqual([
    'accepted_formats',
    'accepted_trust_frameworks',
    'reason',
    'required_claims',
  ]);
  return (r.data as { reason: string }).reason;
}

/** A compact SD-JWT with one part replaced. */
function tamper(token: string, edit: (parts: string[]) => void): string {
  const parts = token.split('~');
  edit(parts);
  return parts.join('~');
}

function reencode(segment: string, change: (o: Record<string, unknown>) => void): string {
  const o = JSON.parse(fromUtf8(b64urlDecode(segment))) as Record<string, unknown>;
  change(o);
  return b64urlEncode(utf8(JSON.stringify(o)));
}

describe('SD-JWT VC presentations (did:key issuer)', () => {
  const checker = sdJwtAssertionChecker(policy);

  it('accepts a presentation disclosing what is asked, and only that is seen', async () => {
    const credential = await issuer.issue(holder);
    expect(await credentialInfo(credential)).toMatchObject({
      issuer: issuer.did,
      vct: VCT,
      disclosable: ['given_name', 'family_name', 'birthdate'],
    });
    const [verified] = await checker.verify([await present(credential)], context());
    expect(verified).toMatchObject({
      format: 'vc+sd-jwt',
      issuer: issuer.did,
      credentialType: VCT,
      claims: { given_name: 'Alice' },
      disclosed: ['given_name'],
      trustedBy: 'did',
      presenter: 'did:key:zpresenter',
    });
    expect(verified!.claims).not.toHaveProperty('family_name');
    expect(checker.required).toBe(true);
  });

  it('unsupported_format: another format, or another assertion type', async () => {
    const credential = await issuer.issue(holder);
    const assertion = await present(credential);
    expect(await reasonOf(checker.verify([{ ...assertion, format: 'mso_mdoc' }], context()))).toBe(
      'unsupported_format',
    );
    expect(await reasonOf(checker.verify([{ type: 'x509_chain', x5c: ['AAAA'] }], context()))).toBe(
      'unsupported_format',
    );
    // dc+sd-jwt is ours too, but only when the policy lists it.
    expect(await reasonOf(checker.verify([{ ...assertion, format: 'dc+sd-jwt' }], context()))).toBe(
      'unsupported_format',
    );
    const both = sdJwtAssertionChecker({ ...policy, formats: ['vc+sd-jwt', 'dc+sd-jwt'] });
    expect(await reasonOf(both.verify([{ ...assertion, format: 'dc+sd-jwt' }], context()))).toBe('ok');
  });

  it('insufficient_claims: a required claim left undisclosed', async () => {
    const credential = await issuer.issue(holder);
    const data = await refusal(checker.verify([await present(credential, ['family_name'])], context()));
    expect(data).toMatchObject({
      code: -31012,
      data: {
        reason: 'insufficient_claims',
        required_claims: ['given_name'],
        accepted_formats: ['vc+sd-jwt'],
        accepted_trust_frameworks: [],
      },
    });
  });

  it('untrusted_issuer: an issuer the policy does not list', async () => {
    const stranger = didIssuer();
    const credential = await stranger.issue(holder);
    expect(await reasonOf(checker.verify([await present(credential)], context()))).toBe('untrusted_issuer');
  });

  it('invalid_proof: replayed into another session, wrong audience, wrong nonce, tampered, unbound', async () => {
    const credential = await issuer.issue(holder);
    const assertion = await present(credential);
    // The same presentation in another session: its challenge and id differ.
    const other = context({ nonce: 'ch-another-session', audiences: ['ses-Other'] });
    expect(await reasonOf(checker.verify([assertion], other))).toBe('invalid_proof');
    // The assertion's members say this session, the key binding JWT another audience / nonce.
    const wrongAud = await present(credential, ['given_name'], { audience: 'ses-Other' });
    expect(await reasonOf(checker.verify([{ ...wrongAud, audience: SESSION }], context()))).toBe('invalid_proof');
    const wrongNonce = await present(credential, ['given_name'], { nonce: 'ch-wrong' });
    expect(await reasonOf(checker.verify([{ ...wrongNonce, nonce: NONCE }], context()))).toBe('invalid_proof');
    // A disclosure changed: its digest is no longer in the signed payload.
    const changedDisclosure = tamper(assertion.vp_token, (parts) => {
      parts[1] = b64urlEncode(utf8(JSON.stringify(['salt', 'given_name', 'Mallory'])));
    });
    expect(await reasonOf(checker.verify([{ ...assertion, vp_token: changedDisclosure }], context()))).toBe(
      'invalid_proof',
    );
    // The issuer-signed payload changed.
    const changedPayload = tamper(assertion.vp_token, (parts) => {
      const [h, p, s] = parts[0]!.split('.');
      parts[0] = [h, reencode(p!, (o) => (o.given_name = 'Mallory')), s].join('.');
    });
    expect(await reasonOf(checker.verify([{ ...assertion, vp_token: changedPayload }], context()))).toBe(
      'invalid_proof',
    );
    // A key binding JWT by another key than cnf names.
    const thief = holderKey();
    const stolen = await sdJwtAssertion(credential, {
      disclose: ['given_name'],
      nonce: NONCE,
      audience: SESSION,
      holder: thief,
    });
    expect(await reasonOf(checker.verify([stolen], context()))).toBe('invalid_proof');
    // No key binding JWT at all.
    const unbound = { ...assertion, vp_token: assertion.vp_token.slice(0, assertion.vp_token.lastIndexOf('~') + 1) };
    expect(await reasonOf(checker.verify([unbound], context()))).toBe('invalid_proof');
    // No challenge known for the session.
    expect(await reasonOf(checker.verify([assertion], context({ nonce: undefined })))).toBe('invalid_proof');
    // A key binding JWT from long ago.
    const old = await present(credential, ['given_name'], { now: Date.now() - 3600_000 });
    expect(await reasonOf(checker.verify([old], context()))).toBe('invalid_proof');
    // Garbage and too much.
    expect(await reasonOf(checker.verify([{ ...assertion, vp_token: 'not.a.token~' }], context()))).toBe(
      'invalid_proof',
    );
    expect(await reasonOf(checker.verify([{ ...assertion, vp_token: 'x'.repeat(17 * 1024) }], context()))).toBe(
      'invalid_proof',
    );
    expect(await reasonOf(checker.verify(Array(5).fill(assertion), context()))).toBe('invalid_proof');
  });

  it('expired: a credential past its exp', async () => {
    const credential = await issuer.issue(holder, { expiresAt: Date.now() - 3600_000 });
    expect(await reasonOf(checker.verify([await present(credential)], context()))).toBe('expired');
  });

  it('accepts the MLS group id as audience when the context names it', async () => {
    const credential = await issuer.issue(holder);
    const assertion = await present(credential, ['given_name'], { audience: 'group-xyz' });
    expect(await reasonOf(checker.verify([assertion], context({ audiences: [SESSION, 'group-xyz'] })))).toBe('ok');
  });
});

describe('SD-JWT VC presentations (X.509 issuer, x509_pki)', () => {
  let x509: X509Issuer;
  beforeAll(async () => {
    x509 = await x509Issuer();
  });

  it('accepts a chain to the anchors; follows an x509_pki hint; reports the others', async () => {
    const checker = sdJwtAssertionChecker({ requiredClaims: ['given_name'], trustAnchors: x509.pki.root.pem });
    expect(checker.diagnostics.acceptedTrustFrameworks).toEqual(['x509_pki']);
    const credential = await x509.issue(holder);
    const hints = [
      { framework: 'x509_pki', root_ca: 'CN=WMP Test Root' },
      { framework: 'eidas_lote', lote_url: 'https://lote.example.eu/' },
      { framework: 'made_up' },
    ];
    const [verified] = await checker.verify(
      [await present(credential, ['given_name'], { trustHints: hints })],
      context(),
    );
    expect(verified).toMatchObject({ issuer: x509.iss, trustedBy: 'x509_pki' });
    expect(verified!.hints).toEqual([
      { framework: 'x509_pki', outcome: 'followed' },
      { framework: 'eidas_lote', outcome: 'unsupported' },
      { framework: 'made_up', outcome: 'unknown' },
    ]);
    // A hint naming another root: that root is not among the anchors.
    const elsewhere = await present(credential, ['given_name'], {
      trustHints: [{ framework: 'x509_pki', root_ca: 'CN=Other Root' }],
    });
    expect(await reasonOf(checker.verify([elsewhere], context()))).toBe('untrusted_issuer');
  });

  it('untrusted_issuer: a chain to another CA, or no anchors at all', async () => {
    const checker = sdJwtAssertionChecker({ trustAnchors: x509.pki.root.pem });
    const foreign = await x509.issue(holder, 'foreign');
    expect(await reasonOf(checker.verify([await present(foreign)], context()))).toBe('untrusted_issuer');
    const none = sdJwtAssertionChecker({});
    expect(await reasonOf(none.verify([await present(await x509.issue(holder))], context()))).toBe('untrusted_issuer');
  });
});

describe('SD-JWT VC presentations (https issuer: JWKS and status lists through the injected fetch)', () => {
  let web: WebIssuer;
  beforeAll(async () => {
    web = await webIssuer();
  });
  afterAll(() => web.close());

  const checkerFor = () =>
    sdJwtAssertionChecker(
      { requiredClaims: ['given_name'], trustedIssuers: [web.origin] },
      { fetch: plainFetch, httpOrigins: [web.origin] },
    );

  it('finds the key in the issuer metadata (fetched once, cached)', async () => {
    const checker = checkerFor();
    const credential = await web.issue(holder);
    const before = web.requests.length;
    for (let i = 0; i < 2; i++) {
      const [verified] = await checker.verify([await present(credential)], context());
      expect(verified).toMatchObject({ issuer: web.origin, trustedBy: 'issuer_jwks', claims: { given_name: 'Alice' } });
    }
    expect(web.requests.slice(before)).toEqual(['/.well-known/jwt-vc-issuer']);
  });

  it('nothing is fetched without a fetcher: untrusted_issuer', async () => {
    const checker = sdJwtAssertionChecker({ trustedIssuers: [web.origin] }, { httpOrigins: [web.origin] });
    expect(await reasonOf(checker.verify([await present(await web.issue(holder))], context()))).toBe(
      'untrusted_issuer',
    );
  });

  it('revoked: the status list entry is set; a valid entry passes; an unreachable list is invalid_proof', async () => {
    const uri = await web.publishStatusList('1', [0, 1, 0, 0, 0, 0, 0, 0]);
    const checker = checkerFor();
    const good = await web.issue(holder, { idx: 0, uri });
    expect(await reasonOf(checker.verify([await present(good)], context()))).toBe('ok');
    const revoked = await web.issue(holder, { idx: 1, uri });
    expect(await reasonOf(checker.verify([await present(revoked)], context()))).toBe('revoked');
    const missing = await web.issue(holder, { idx: 0, uri: `${web.origin}/status/none` });
    expect(await reasonOf(checker.verify([await present(missing)], context()))).toBe('invalid_proof');
  });
});
