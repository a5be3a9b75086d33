import { readFileSync } from 'node:fs';
import { b64urlDecode, b64urlEncode, fromUtf8, utf8 } from '@wmp/jcs-signing';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import { type OhanEvent, parseUtcTime, signEvent, signRequest, unsignedPart } from '@wmp/ohan-seal';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BOX_API_PREFIX } from '../src/node.js';
import { event, type Party, party } from '../src/storage/testing/events.js';
import { type Box, errorOf, removeTempDirs, STORE_KINDS, startBox } from './fixtures/box-api-harness.js';

const P = BOX_API_PREFIX;
const V = JSON.parse(readFileSync(new URL('../../../vectors/ohan/ohan-vectors.json', import.meta.url), 'utf8')) as {
  now: string;
  invalid: { name: string; reason: string; event: Record<string, unknown> }[];
};
const VALIDATION = new Set(['shape', 'id', 'signature', 'stamp', 'time', 'too_large']);
const DAY = 24 * 3600_000;
afterAll(removeTempDirs);

/** Everything a refused request must leave as it was: totals, Bob's queue, Bob's allow list. */
async function state(b: Box, bob: Party) {
  return {
    totals: await b.store.totals(),
    queue: await b.store.fetch(bob.key, 0, 500),
    allow: await b.store.getAllow(bob.key),
  };
}

describe.each(STORE_KINDS)('box API refuses bad requests (%s store)', (kind) => {
  let b: Box;
  let alice: Party;
  let bob: Party;
  let before: Awaited<ReturnType<typeof state>>;

  beforeEach(async () => {
    b = await startBox(kind, { maxBodyBytes: 96 * 1024 });
    [alice, bob] = [party(), party()];
    await b.store.putAllow(bob.key, [alice.key]);
    expect((await b.send('POST', `${P}/events`, await event(alice, bob))).status).toBe(202);
    before = await state(b, bob);
  });
  afterEach(async () => {
    expect(await state(b, bob)).toEqual(before);
    await b.close();
  });

  async function expectError(response: Promise<Response>, status: number, code: string, reason?: string) {
    expect(await errorOf(await response)).toEqual({ status, code, ...(reason ? { reason } : {}) });
  }

  it('malformed JSON, duplicate keys and non-UTF-8 events: invalid_event (json)', async () => {
    await expectError(b.send('POST', `${P}/events`, '{"protocol":'), 400, 'invalid_event', 'json');
    const text = JSON.stringify(await event(alice, bob));
    await expectError(
      b.send('POST', `${P}/events`, `${text.slice(0, -1)},"to":"${alice.key}"}`),
      400,
      'invalid_event',
      'json',
    );
    const bytes = new Uint8Array([...utf8('{"a":"'), 0xff, ...utf8('"}')]);
    const r = fetch(b.origin + `${P}/events`, { method: 'POST', body: bytes });
    await expectError(r, 400, 'invalid_event', 'json');
    await expectError(b.send('POST', `${P}/events`, '[]'), 400, 'invalid_event', 'shape');
    await expectError(b.send('POST', `${P}/events`, ''), 400, 'invalid_event', 'json');
  });

  const validation = V.invalid.filter((v) => VALIDATION.has(v.reason));
  it('has a validation vector for each verification step', () => {
    expect(new Set(validation.map((v) => v.reason))).toEqual(new Set(['shape', 'id', 'signature', 'stamp', 'time']));
  });

  for (const vector of validation) {
    it(`vector "${vector.name}" at the vectors' time: invalid_event (${vector.reason})`, async () => {
      const atVectorTime = await startBox(kind, { now: () => parseUtcTime(V.now)! });
      try {
        await expectError(atVectorTime.send('POST', `${P}/events`, vector.event), 400, 'invalid_event', vector.reason);
        expect(await atVectorTime.store.totals()).toEqual({ count: 0, bytes: 0 });
      } finally {
        await atVectorTime.close();
      }
    });
  }

  // The same mutations on fresh events, re-signed where the vector was, so the box's real clock applies.
  const mutations: Record<string, (e: OhanEvent) => Promise<unknown>> = {
    'id does not match': async (e) => ({ ...e, id: (e.id.startsWith('00') ? 'ff' : '00') + e.id.slice(2) }),
    'field changed after signing': async (e) => ({ ...e, ts: rfc3339(parseUtcTime(e.ts)! + 1000) }),
    'signed by another key': async (e) => ({
      ...e,
      signature: (await signEvent(unsignedPart(e), party().signer)).signature,
    }),
    'stamp claims more bits than the id has': (e) => resign(e, { stamp: { bits: 30, nonce: '0' } }),
    'exp more than 30 days + 5 min ahead': (e) => resign(e, { exp: rfc3339(Date.now() + 30 * DAY + 7 * 60_000) }),
    expired: (e) => resign(e, { ts: rfc3339(Date.now() - 60_000), exp: rfc3339(Date.now() - 30_000) }),
    'ts in the future beyond skew': (e) => resign(e, { ts: rfc3339(Date.now() + 7 * 60_000) }),
    'unknown field': (e) => resign(e, { note: 'x' }),
    'kind is not sealed': (e) => resign(e, { kind: 'plain' }),
  };
  async function resign(e: OhanEvent, change: Record<string, unknown>): Promise<OhanEvent> {
    return signEvent({ ...unsignedPart(e), ...change } as never, alice.signer);
  }

  for (const vector of validation) {
    it(`vector "${vector.name}" on a fresh event, now: invalid_event (${vector.reason})`, async () => {
      const mutate = mutations[vector.name];
      expect(mutate, `a mutation for "${vector.name}"`).toBeDefined();
      const bad = await mutate!(await event(alice, bob));
      await expectError(b.send('POST', `${P}/events`, bad), 400, 'invalid_event', vector.reason);
    });
  }

  it('oversized bodies: 413 too_large before parsing (declared or streamed)', async () => {
    const junk = 'x'.repeat(96 * 1024 + 1); // not JSON: a 413 proves nothing was parsed
    await expectError(b.send('POST', `${P}/events`, junk), 413, 'too_large');
    const chunk = utf8('y'.repeat(32 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const streamed = fetch(b.origin + `${P}/events`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    await expectError(streamed, 413, 'too_large');
    const ids = Array.from({ length: 2000 }, (_, i) => `${i}`.padStart(64, '0'));
    await expectError(b.signed(bob, 'POST', `${P}/delivered`, { ids }), 413, 'too_large');
  });

  it('an event over max_event_bytes inside a larger body cap: 413 too_large', async () => {
    const small = await startBox(kind, { maxEventBytes: 1024, maxBodyBytes: 64 * 1024 });
    try {
      const e = await event(alice, bob, { bodyBytes: 1024 });
      await expectError(small.send('POST', `${P}/events`, e), 413, 'too_large');
    } finally {
      await small.close();
    }
  });

  it('more than 500 ids, or ids that are not strings: bad_request', async () => {
    const ids = Array.from({ length: 501 }, (_, i) => `${i}`);
    await expectError(b.signed(bob, 'POST', `${P}/delivered`, { ids }), 400, 'bad_request');
    await expectError(b.signed(bob, 'POST', `${P}/delivered`, { ids: [1] }), 400, 'bad_request');
    await expectError(b.signed(bob, 'POST', `${P}/delivered`, { ids: [], more: 1 }), 400, 'bad_request');
    await expectError(b.signed(bob, 'POST', `${P}/delivered`, '{"ids":[],"ids":[]}'), 400, 'bad_request');
    await expectError(b.signed(bob, 'POST', `${P}/delivered`, '{"ids":'), 400, 'bad_request');
  });

  it('bad cursors and limits: bad_request', async () => {
    for (const q of ['after=-1', 'after=abc', 'after=1.5', 'limit=0', 'limit=x', 'key=z6Mk']) {
      await expectError(b.signed(bob, 'GET', `${P}/events?${q}`), 400, 'bad_request');
    }
  });

  describe('signed headers: every failure is the same 401 unauthorized', () => {
    const path = `${P}/events?after=0`;
    const get = (authorization?: string) =>
      b.send('GET', path, undefined, authorization === undefined ? {} : { authorization });

    it('missing or malformed', async () => {
      await expectError(get(), 401, 'unauthorized');
      await expectError(get('OHAN-Sig abc'), 401, 'unauthorized');
      await expectError(get('Bearer x.y'), 401, 'unauthorized');
    });

    it('replayed nonce', async () => {
      const header = await signRequest({ signer: bob.signer, origin: b.origin, method: 'GET', target: path });
      expect((await get(header)).status).toBe(200);
      await expectError(get(header), 401, 'unauthorized');
    });

    it('wrong origin, method or target', async () => {
      const sign = (over: Partial<{ origin: string; method: string; target: string }>) =>
        signRequest({ signer: bob.signer, origin: b.origin, method: 'GET', target: path, ...over });
      await expectError(get(await sign({ origin: 'https://other.example' })), 401, 'unauthorized');
      await expectError(get(await sign({ method: 'POST' })), 401, 'unauthorized');
      await expectError(get(await sign({ target: `${P}/events?after=1` })), 401, 'unauthorized');
      // Signed without the mount prefix: the target is the path as sent, relative to the origin.
      await expectError(get(await sign({ target: '/events?after=0' })), 401, 'unauthorized');
    });

    it('stale ts, either side of the skew', async () => {
      for (const offset of [-301_000, 301_000]) {
        const ts = new Date(Date.now() + offset);
        const header = await signRequest({ signer: bob.signer, origin: b.origin, method: 'GET', target: path, ts });
        await expectError(get(header), 401, 'unauthorized');
      }
    });

    it('body hash mismatch', async () => {
      const signedBody = JSON.stringify({ ids: [] });
      const header = await signRequest({
        signer: bob.signer,
        origin: b.origin,
        method: 'POST',
        target: `${P}/delivered`,
        body: signedBody,
      });
      const all = (await b.store.fetch(bob.key, 0, 500)).events.map((e) => e.id);
      const sent = b.send('POST', `${P}/delivered`, { ids: all }, { authorization: header });
      await expectError(sent, 401, 'unauthorized');
    });

    it("another key's queue: claims naming Bob, signed by Carol", async () => {
      const carol = party();
      const header = await signRequest({ signer: carol.signer, origin: b.origin, method: 'GET', target: path });
      const [claims, signature] = header.slice('OHAN-Sig '.length).split('.') as [string, string];
      const forged = { ...JSON.parse(fromUtf8(b64urlDecode(claims))), key: bob.key };
      const sorted = Object.fromEntries(Object.entries(forged).sort(([x], [y]) => (x < y ? -1 : 1)));
      await expectError(
        get(`OHAN-Sig ${b64urlEncode(utf8(JSON.stringify(sorted)))}.${signature}`),
        401,
        'unauthorized',
      );
      const bobs = await (await b.signed(carol, 'GET', path)).json();
      expect(bobs.events).toEqual([]);
    });

    it('on the allow list and delivered too', async () => {
      await expectError(b.send('PUT', `${P}/allow`, { contacts: [] }), 401, 'unauthorized');
      await expectError(b.send('GET', `${P}/allow`), 401, 'unauthorized');
      await expectError(b.send('POST', `${P}/delivered`, { ids: [] }), 401, 'unauthorized');
      await expectError(b.send('GET', `${P}/events/stream`), 401, 'unauthorized');
    });
  });

  it('an allow list over the bound: bad_request', async () => {
    const small = await startBox(kind, { limits: { maxContacts: 2 } });
    try {
      const contacts = [party().key, party().key, party().key];
      await expectError(small.signed(bob, 'PUT', `${P}/allow`, { contacts }), 400, 'bad_request');
      expect(await small.store.getAllow(bob.key)).toEqual([]);
    } finally {
      await small.close();
    }
  });
});
