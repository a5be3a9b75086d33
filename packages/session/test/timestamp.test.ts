import { b64urlEncode, jcsBytes, utf8 } from '@wmp/jcs-signing';
import { TimestampInvalidError } from '@wmp/jsonrpc-envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TsaBehaviour } from '../../../test-support/tsa/tsa-server.js';
import { startTestTsa, type TestTsa } from '../../../test-support/tsa/tsa-server.js';
import { TsaClient, TsaClientError, timestampVerifier, verifyTimestampToken } from '../src/timestamp.js';
import { parseTrustAnchors } from '../src/x509.js';

// RFC 3161 tokens (core §5.5) from a real TSA over HTTP (test-support/tsa): the client that
// obtains them, and the verification a receiver runs, with one test per refusal.

const content = jcsBytes({ to: ['did:key:bob'], content_type: 'application/json', body: { invoice: 'INV-9' } });

async function imprintOf(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}

let tsa: TestTsa;
beforeAll(async () => {
  tsa = await startTestTsa();
});
afterAll(() => tsa.close());

/** The -31011 data of verifying a token the TSA makes while behaving so. */
async function refusalOf(behaviour: TsaBehaviour, over = content): Promise<unknown> {
  tsa.behave(behaviour);
  const token = b64urlEncode(await tsa.tokenFor(await imprintOf(content)));
  tsa.behave({});
  try {
    await verifyTimestampToken(token, over, parseTrustAnchors(tsa.anchorsPem), Date.now());
    return 'ok';
  } catch (e) {
    if (!(e instanceof TimestampInvalidError)) throw e;
    return e.data;
  }
}

describe('TsaClient (RFC 3161 §3.4 over HTTP)', () => {
  it('obtains a token over the SHA-256 of the content, verified before it is returned', async () => {
    tsa.behave({});
    const client = new TsaClient({ url: tsa.url, anchors: tsa.anchorsPem });
    const before = tsa.requests;
    const obtained = await client.timestamp(content);
    expect(tsa.requests).toBe(before + 1);
    expect(obtained.token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Math.abs(obtained.genTime - Date.now())).toBeLessThan(60_000);
    expect(obtained.tsa).toMatch(/^[0-9a-f]{64}$/);
    // The same token verifies on its own, as a receiver checks it.
    await expect(client.verifier.verify(obtained.token, content, Date.now())).resolves.toMatchObject({
      genTime: obtained.genTime,
      serialNumber: obtained.serialNumber,
    });
  });

  const failures: [string, TsaBehaviour, string, number | undefined][] = [
    ['a refusal (PKIStatus rejection)', { refuse: 2 }, 'ERR_TSA_REFUSED', 2],
    ['a refusal (PKIStatus waiting)', { refuse: 3 }, 'ERR_TSA_REFUSED', 3],
    ['an HTTP error', { httpStatus: 503 }, 'ERR_TSA_HTTP', 503],
    ['another media type', { contentType: 'text/html' }, 'ERR_TSA_HTTP', 200],
    ['a token for another nonce', { fault: 'wrong_nonce' }, 'ERR_TSA_MISMATCH', undefined],
    ['a token for another imprint', { fault: 'wrong_imprint' }, 'ERR_TSA_MISMATCH', undefined],
    ['a token with a bad signature', { fault: 'bad_signature' }, 'ERR_TSA_TOKEN', undefined],
    ['a token from an expired TSA certificate', { certificate: 'expired' }, 'ERR_TSA_TOKEN', undefined],
  ];
  it.each(failures)('refuses %s', async (_name, behaviour, code, status) => {
    tsa.behave(behaviour);
    const client = new TsaClient({ url: tsa.url, anchors: tsa.anchorsPem });
    const error = await client.timestamp(content).catch((e: unknown) => e);
    tsa.behave({});
    expect(error).toBeInstanceOf(TsaClientError);
    expect((error as TsaClientError).code).toBe(code);
    expect((error as TsaClientError).status).toBe(status);
    if (code === 'ERR_TSA_TOKEN') expect((error as TsaClientError).cause).toBeInstanceOf(TimestampInvalidError);
  });

  it('refuses a TSA that cannot be reached', async () => {
    const gone = await startTestTsa();
    await gone.close();
    const client = new TsaClient({ url: gone.url, anchors: gone.anchorsPem, timeoutMs: 2000 });
    await expect(client.timestamp(content)).rejects.toMatchObject({ code: 'ERR_TSA_UNREACHABLE' });
  });

  it('refuses bad anchors when it is made', () => {
    expect(() => new TsaClient({ url: tsa.url, anchors: 'no PEM here' })).toThrow();
    expect(() => timestampVerifier({ anchors: [] })).toThrow();
  });
});

describe('verifyTimestampToken (core §5.5, RFC 3161 §2.3, §2.4.1)', () => {
  it('accepts a good token and says when and by whom', async () => {
    expect(await refusalOf({})).toBe('ok');
  });

  it('token_imprint: the token is for other content, or its imprint is not SHA-256', async () => {
    expect(await refusalOf({}, utf8('{"body":"other"}'))).toEqual({ reason: 'token_imprint' });
    expect(await refusalOf({ fault: 'sha512_imprint' })).toEqual({
      reason: 'token_imprint',
      detail: 'hash_algorithm',
    });
  });

  it('token_signature: the CMS signature does not verify', async () => {
    expect(await refusalOf({ fault: 'bad_signature' })).toEqual({ reason: 'token_signature' });
  });

  it('token_untrusted: the TSA certificate is not one trusted for time stamping', async () => {
    expect(await refusalOf({ certificate: 'expired' })).toEqual({ reason: 'token_untrusted', detail: 'expired' });
    expect(await refusalOf({ certificate: 'wrong_eku' })).toEqual({
      reason: 'token_untrusted',
      detail: 'extended_key_usage',
    });
    expect(await refusalOf({ certificate: 'eku_not_critical' })).toEqual({
      reason: 'token_untrusted',
      detail: 'extended_key_usage',
    });
    expect(await refusalOf({ certificate: 'no_eku' })).toEqual({
      reason: 'token_untrusted',
      detail: 'extended_key_usage',
    });
    expect(await refusalOf({ certificate: 'untrusted' })).toEqual({
      reason: 'token_untrusted',
      detail: 'untrusted_chain',
    });
    expect(await refusalOf({ fault: 'other_signing_certificate' })).toEqual({
      reason: 'token_untrusted',
      detail: 'signing_certificate',
    });
    // A genTime before the TSA certificate existed: backdated with a newer key.
    expect(await refusalOf({ clockOffsetMs: -3 * 3600_000 })).toEqual({
      reason: 'token_untrusted',
      detail: 'gen_time_outside_validity',
    });
  });

  it('token_malformed: not a TimeStampToken, or without the ESS signing-certificate attribute', async () => {
    expect(await refusalOf({ fault: 'no_signing_certificate' })).toEqual({
      reason: 'token_malformed',
      detail: 'signing_certificate',
    });
    const anchors = parseTrustAnchors(tsa.anchorsPem);
    const data = async (token: string) =>
      (await verifyTimestampToken(token, content, anchors, Date.now()).catch((e: { data: unknown }) => e)) as {
        data: unknown;
      };
    expect((await data('not base64url!')).data).toEqual({ reason: 'token_malformed' });
    expect((await data(b64urlEncode(utf8('hello')))).data).toEqual({ reason: 'token_malformed' });
    // A certificate is DER but no token.
    expect((await data(b64urlEncode(tsa.pki.root.der))).data).toEqual({ reason: 'token_malformed' });
    expect((await data('A'.repeat(70_000))).data).toEqual({ reason: 'token_malformed' });
  });

  it('token_unsupported: an RFC 9162 SCT (sct: prefix)', async () => {
    const anchors = parseTrustAnchors(tsa.anchorsPem);
    await expect(verifyTimestampToken('sct:AAAA', content, anchors, Date.now())).rejects.toMatchObject({
      code: -31011,
      data: { reason: 'token_unsupported' },
    });
  });
});
