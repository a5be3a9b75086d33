// RFC 3161 timestamps (core §5.5) as the SDK obtains and checks them: a real TSA over HTTP
// (test-support/tsa) and a real relay; the token travels in `wmp.timestamp_token`.
import { TsaClientError } from '@wmp/session/timestamp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestTsa, type TestTsa } from '../../../test-support/tsa/tsa-server.js';
import type { IncomingSession, PeerMessage } from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();
let tsa: TestTsa;
beforeAll(async () => {
  tsa = await startTestTsa();
});
afterAll(() => tsa.close());

describe('timestamps (core §5.5)', () => {
  it('a client with a TSA timestamps what it sends; the receiver verifies the token against its TSA anchors', async () => {
    tsa.behave({});
    const { url } = await bed.relay();
    const alice = await bed.client(url, { timestamp: { url: tsa.url, anchors: tsa.anchorsPem } });
    const bob = await bed.client(url, { timestamp: { anchors: tsa.anchorsPem } });
    const carol = await bed.client(url);
    const before = tsa.requests;
    await alice.client.send([bob.identity.did, carol.identity.did], { letter: 'registered' }, { sign: true });
    expect(tsa.requests).toBe(before + 1);
    await waitFor(() => bob.inbox.length === 1 && carol.inbox.length === 1);
    const got = bob.inbox[0]!;
    expect(got.timestamp?.valid).toBe(true);
    expect(Math.abs(got.timestamp!.time!.getTime() - Date.now())).toBeLessThan(60_000);
    expect(got.timestamp?.tsa).toMatch(/^[0-9a-f]{64}$/);
    expect(got.signature).toMatchObject({ valid: true, signer: alice.identity.did });
    // Carol has no TSA anchors: the token is there, but nothing she trusts vouches for it.
    expect(carol.inbox[0]!.timestamp).toEqual({ time: undefined, valid: false, reason: 'no_anchors' });
  });

  it('per message: timestamp false leaves it out, a TSA given to send puts one in', async () => {
    tsa.behave({});
    const { url } = await bed.relay();
    const alice = await bed.client(url, { timestamp: { url: tsa.url, anchors: tsa.anchorsPem } });
    const plain = await bed.client(url);
    const bob = await bed.client(url, { timestamp: { anchors: tsa.anchorsPem } });
    await alice.client.send(bob.identity.did, 'no token', { timestamp: false });
    await plain.client.send(bob.identity.did, 'token', { timestamp: { url: tsa.url, anchors: tsa.anchorsPem } });
    await waitFor(() => bob.inbox.length === 2);
    const byBody = new Map(bob.inbox.map((m) => [m.body, m]));
    expect(byBody.get('no token')!.timestamp).toBeUndefined();
    expect(byBody.get('token')!.timestamp?.valid).toBe(true);
  });

  it('a TSA that misbehaves fails the send (nothing is sent without the token asked for)', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url, { timestamp: { url: tsa.url, anchors: tsa.anchorsPem } });
    const bob = await bed.client(url);
    for (const [behaviour, code] of [
      [{ fault: 'bad_signature' }, 'ERR_TSA_TOKEN'],
      [{ certificate: 'wrong_eku' }, 'ERR_TSA_TOKEN'],
      [{ fault: 'wrong_imprint' }, 'ERR_TSA_MISMATCH'],
      [{ refuse: 2 }, 'ERR_TSA_REFUSED'],
      [{ httpStatus: 500 }, 'ERR_TSA_HTTP'],
    ] as const) {
      tsa.behave(behaviour);
      const error = await alice.client.send(bob.identity.did, 'never sent').catch((e: unknown) => e);
      expect(error, JSON.stringify(behaviour)).toBeInstanceOf(TsaClientError);
      expect((error as TsaClientError).code).toBe(code);
    }
    tsa.behave({});
    await alice.client.send(bob.identity.did, 'sent');
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox.map((m) => m.body)).toEqual(['sent']);
  });

  it('a token over other content is reported, with its reason', async () => {
    tsa.behave({});
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url, { timestamp: { anchors: tsa.anchorsPem } });
    const { TsaClient } = await import('@wmp/session/timestamp');
    const { token } = await new TsaClient({ url: tsa.url, anchors: tsa.anchorsPem }).timestamp(
      new TextEncoder().encode('{"body":"something else"}'),
    );
    await alice.client.request('wmp.message.deliver', {
      wmp: { timestamp_token: token },
      to: [bob.identity.did],
      content_type: 'application/json',
      body: 'this',
    });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.timestamp).toEqual({ time: undefined, valid: false, reason: 'token_imprint' });
  });

  it('timestamps deliveries on a session end to end', async () => {
    tsa.behave({});
    const { url } = await bed.relay();
    const alice = await bed.client(url, { timestamp: { url: tsa.url, anchors: tsa.anchorsPem } });
    const bob = await bed.client(url, { timestamp: { anchors: tsa.anchorsPem } });
    const incoming: IncomingSession[] = [];
    await bob.client.onSession((s) => incoming.push(s));
    const session = await alice.client.openSession(bob.identity.did);
    await waitFor(() => incoming.length === 1);
    const atBob: PeerMessage[] = [];
    incoming[0]!.on('message', (m) => {
      atBob.push(m);
    });
    await session.send({ text: 'stamped' });
    await waitFor(() => atBob.length === 1);
    expect(atBob[0]!.timestamp?.valid).toBe(true);
  });
});
