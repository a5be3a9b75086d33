import { jcsBytes } from '@wmp/jcs-signing';
import { rfc3339, TimestampInvalidError } from '@wmp/jsonrpc-envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestTsa, type TestTsa, type TsaBehaviour } from '../../../test-support/tsa/tsa-server.js';
import type { WmpSession } from '../src/index.js';
import { TsaClient, timestampVerifier } from '../src/timestamp.js';
import { harness } from './helpers.js';

// Core §8.5.2 in the session engine: a WmpServer with TSA anchors (`timestampTokens`) verifies
// `wmp.timestamp_token` and uses its time instead of the self-asserted `wmp.timestamp` for the
// skew rule; a bad token is -31011 with `data.reason`. Tokens come from a real TSA over HTTP.

let tsa: TestTsa;
beforeAll(async () => {
  tsa = await startTestTsa();
});
afterAll(() => tsa.close());

const content = { to: [] as string[], content_type: 'text/plain', body: 'registered letter' };
const minutesAgo = (m: number) => rfc3339(Date.now() - m * 60_000);

async function tokenFor(behaviour: TsaBehaviour = {}): Promise<string> {
  tsa.behave(behaviour);
  try {
    // The TSA client verifies what it gets; a token made wrong on purpose comes straight from the TSA.
    if (Object.keys(behaviour).length === 0) {
      return (await new TsaClient({ url: tsa.url, anchors: tsa.anchorsPem }).timestamp(jcsBytes(content))).token;
    }
    const imprint = new Uint8Array(await crypto.subtle.digest('SHA-256', jcsBytes(content) as Uint8Array<ArrayBuffer>));
    return Buffer.from(await tsa.tokenFor(imprint)).toString('base64url');
  } finally {
    tsa.behave({});
  }
}

function deliver(session: WmpSession, wmp: Record<string, unknown>): Promise<unknown> {
  return session.request('wmp.message.deliver', { wmp, ...content });
}

async function failureOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (!(e instanceof TimestampInvalidError)) throw e;
    return e.data;
  }
}

describe('timestamp token precedence (core §8.5.2)', () => {
  const withTsa = () => harness({ timestampTokens: timestampVerifier({ anchors: tsa.anchorsPem }) });

  it('a valid token is authoritative: a self-asserted time far off does not refuse the message', async () => {
    const { session } = await withTsa().open();
    const token = await tokenFor();
    await expect(deliver(session, { timestamp: minutesAgo(10), timestamp_token: token })).resolves.toEqual({});
    await expect(deliver(session, { timestamp_token: token })).resolves.toEqual({});
  });

  it("the token's time is checked against the skew window (-31011 clock_skew, from the token)", async () => {
    const { session } = await withTsa().open();
    // A TSA two minutes behind (or an old token replayed): the token's time is outside ±30 s.
    const old = await tokenFor({ clockOffsetMs: -120_000 });
    const data = await failureOf(deliver(session, { timestamp: rfc3339(Date.now()), timestamp_token: old }));
    expect(data).toMatchObject({
      reason: 'clock_skew',
      acceptable_window_seconds: 30,
      timestamp_source: 'timestamp_token',
    });
  });

  it('a bad token is -31011 with its reason, whatever the self-asserted time says', async () => {
    const { session } = await withTsa().open();
    const now = rfc3339(Date.now());
    expect(
      await failureOf(
        deliver(session, { timestamp: now, timestamp_token: await tokenFor({ fault: 'bad_signature' }) }),
      ),
    ).toEqual({
      reason: 'token_signature',
    });
    expect(
      await failureOf(
        deliver(session, { timestamp: now, timestamp_token: await tokenFor({ certificate: 'wrong_eku' }) }),
      ),
    ).toEqual({
      reason: 'token_untrusted',
      detail: 'extended_key_usage',
    });
    expect(await failureOf(deliver(session, { timestamp: now, timestamp_token: 'garbage!' }))).toEqual({
      reason: 'token_malformed',
    });
    // A good token for other content.
    const token = await tokenFor();
    const other = session.request('wmp.message.deliver', {
      wmp: { timestamp: now, timestamp_token: token },
      ...content,
      body: 'another letter',
    });
    expect(await failureOf(other)).toEqual({ reason: 'token_imprint' });
  });

  it('without TSA anchors the token is not read: the self-asserted time decides, as before', async () => {
    const { session } = await harness().open();
    const token = await tokenFor();
    expect(await failureOf(deliver(session, { timestamp: minutesAgo(10), timestamp_token: token }))).toMatchObject({
      reason: 'clock_skew',
    });
    await expect(deliver(session, { timestamp: rfc3339(Date.now()), timestamp_token: 'garbage!' })).resolves.toEqual(
      {},
    );
  });

  it('a sessionless message (a create) is checked by its self-asserted time only', async () => {
    const h = withTsa();
    const peer = await h.connect();
    const create = (wmp: Record<string, unknown>) =>
      peer.request('wmp.session.create', { wmp: { version: '0.1', ...wmp } });
    await expect(create({ timestamp: rfc3339(Date.now()), timestamp_token: 'garbage!' })).resolves.toBeDefined();
    expect(await failureOf(create({ timestamp: minutesAgo(10), timestamp_token: await tokenFor() }))).toMatchObject({
      reason: 'clock_skew',
    });
  });
});
