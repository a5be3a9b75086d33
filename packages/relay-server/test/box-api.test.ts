import { createCard } from '@wmp/ohan-seal';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { BOX_API_PREFIX, createBoxApp, DEFAULT_BOX_LIMITS, MemoryBoxStore } from '../src/node.js';
import { event, type Party, party } from '../src/storage/testing/events.js';
import {
  type Box,
  type BoxOptions,
  errorOf,
  openStream,
  removeTempDirs,
  STORE_KINDS,
  type StoreKind,
  startBox,
} from './fixtures/box-api-harness.js';

const P = BOX_API_PREFIX;
afterAll(removeTempDirs);

const boxes: Box[] = [];
afterEach(async () => {
  for (const b of boxes.splice(0)) await b.close();
});
async function box(kind: StoreKind, options: BoxOptions = {}): Promise<Box> {
  const b = await startBox(kind, options);
  boxes.push(b);
  return b;
}

/** A first card, stamped as a key the box does not know must (the harness asks 8 bits). */
async function register(b: Box, who: Party): Promise<Response> {
  return b.send(
    'POST',
    `${P}/cards`,
    await createCard({ signer: who.signer, enc: who.enc.multikey, relays: [b.origin], stampBits: CARD_BITS }),
  );
}

const CARD_BITS = 8;

describe.each(STORE_KINDS)('box API over HTTP (%s store)', (kind) => {
  it('GET /limits reports the values in force', async () => {
    const b = await box(kind, { limits: { directory: true, boxBytes: 5_000_000 } });
    const r = await b.send('GET', `${P}/limits`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      protocol: 'ohan.relay.1',
      directory: true,
      stranger_bits: 18,
      card_stamp_bits: 0,
      max_event_bytes: 96 * 1024,
      max_ttl_seconds: 30 * 24 * 3600,
      skew_seconds: 300,
      lanes: { contact: 500, stranger: 3 },
      caps: { sender_bytes: DEFAULT_BOX_LIMITS.senderBytes, recipient_bytes: 32 * 1024 * 1024, box_bytes: 5_000_000 },
    });
  });

  it('publishes (202, then 200 for the same id), fetches by cursor without removing, delivers', async () => {
    const b = await box(kind);
    const [alice, bob, carol] = [party(), party(), party()];
    expect((await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key] })).status).toBe(200);
    const events = [];
    for (let i = 0; i < 5; i++) events.push(await event(alice, bob));
    for (const e of events) {
      const r = await b.send('POST', `${P}/events`, e);
      expect(r.status).toBe(202);
      expect(await r.json()).toEqual({ id: e.id });
    }
    const again = await b.send('POST', `${P}/events`, events[0]);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id: events[0]!.id });
    expect(await b.store.totals()).toMatchObject({ count: 5 });

    const page1 = await (await b.signed(bob, 'GET', `${P}/events?after=0&limit=2`)).json();
    expect(page1).toEqual({ events: events.slice(0, 2).map((e, i) => ({ ...e, seq: i + 1 })), next: 2, more: true });
    const page2 = await (await b.signed(bob, 'GET', `${P}/events?after=2&limit=500`)).json();
    expect(page2.events.map((e: { seq: number }) => e.seq)).toEqual([3, 4, 5]);
    expect(page2).toMatchObject({ next: 5, more: false });
    const byDefault = await (await b.signed(bob, 'GET', `${P}/events`)).json();
    expect(byDefault.events).toHaveLength(5);
    // Carol's queue is hers: the key comes from the signature, so she cannot name Bob's.
    expect(await (await b.signed(carol, 'GET', `${P}/events?after=0`)).json()).toEqual({
      events: [],
      next: 0,
      more: false,
    });
    const foreign = await b.signed(carol, 'POST', `${P}/delivered`, { ids: events.map((e) => e.id) });
    expect(await foreign.json()).toEqual({ removed: 0 });
    expect(await b.store.totals()).toMatchObject({ count: 5 });

    const delivered = await b.signed(bob, 'POST', `${P}/delivered`, {
      ids: [events[0]!.id, events[1]!.id, 'f'.repeat(64)],
    });
    expect(delivered.status).toBe(200);
    expect(await delivered.json()).toEqual({ removed: 2 });
    const rest = await (await b.signed(bob, 'GET', `${P}/events?after=0`)).json();
    expect(rest.events.map((e: { id: string }) => e.id)).toEqual(events.slice(2).map((e) => e.id));
  });

  it('keeps the allow list of the caller: PUT replaces, GET reads, duplicates dropped', async () => {
    const b = await box(kind);
    const [bob, alice, carol] = [party(), party(), party()];
    expect(await (await b.signed(bob, 'GET', `${P}/allow`)).json()).toEqual({ contacts: [] });
    const put = await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key, carol.key, alice.key] });
    expect(await put.json()).toEqual({ contacts: [alice.key, carol.key] });
    await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [carol.key] });
    expect(await (await b.signed(bob, 'GET', `${P}/allow`)).json()).toEqual({ contacts: [carol.key] });
    expect(await (await b.signed(alice, 'GET', `${P}/allow`)).json()).toEqual({ contacts: [] });
    const bad = await b.signed(bob, 'PUT', `${P}/allow`, { contacts: ['did:key:nope'] });
    expect(await errorOf(bad)).toEqual({ status: 400, code: 'bad_request' });
    expect(await b.store.getAllow(bob.key)).toEqual([carol.key]);
  });

  it('streams the queue over SSE with id = seq, live, and resumes from Last-Event-ID', async () => {
    const b = await box(kind, { keepAliveMs: 50 });
    const [alice, bob] = [party(), party()];
    await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key] });
    const events = [];
    for (let i = 0; i < 7; i++) events.push(await event(alice, bob));
    for (const e of events.slice(0, 3)) await b.send('POST', `${P}/events`, e);

    const s1 = await openStream(b, bob);
    expect(s1.response.status).toBe(200);
    expect(s1.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await s1.next(3);
    for (const e of events.slice(3, 5)) expect((await b.send('POST', `${P}/events`, e)).status).toBe(202);
    await s1.next(5);
    expect(s1.events.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5']);
    expect(s1.events.map((e) => JSON.parse(e.data))).toEqual(events.slice(0, 5).map((e, i) => ({ ...e, seq: i + 1 })));
    await s1.close();

    await b.send('POST', `${P}/events`, events[5]);
    const s2 = await openStream(b, bob, '4');
    await s2.next(2);
    // A keep-alive comment comes after the events, and is no event.
    const replayed = s2.raw().length;
    await vi.waitFor(() => expect(s2.raw().slice(replayed)).toMatch(/^: ?keep-alive$/m), { timeout: 5000 });
    // A seventh event is the marker: a repeated one would have come before it.
    expect((await b.send('POST', `${P}/events`, events[6])).status).toBe(202);
    await s2.next(3);
    expect(s2.events.map((e) => e.id)).toEqual(['5', '6', '7']);
    // Streaming removes nothing.
    expect(await b.store.totals()).toMatchObject({ count: 7 });
    await s2.close();
  });

  it('bounds open streams per key and ends them on close()', async () => {
    const b = await box(kind, { maxStreamsPerKey: 1 });
    const bob = party();
    const s1 = await openStream(b, bob);
    expect(s1.response.status).toBe(200);
    const s2 = await openStream(b, bob);
    expect(await errorOf(s2.response)).toEqual({ status: 429, code: 'rate_limited' });
    expect(b.app.openStreams).toBe(1);
    await b.app.close();
    expect(b.app.openStreams).toBe(0);
    await s1.ended; // the client sees its stream end (nobody aborted it)
  });

  it('directory mode: cards (201, stale 200, lookup, 404) and not_registered until both have cards', async () => {
    const b = await box(kind, { limits: { directory: true, cardStampBits: CARD_BITS } });
    const [alice, bob] = [party(), party()];
    await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key] });
    const e = await event(alice, bob);
    expect(await errorOf(await b.send('POST', `${P}/events`, e))).toEqual({ status: 403, code: 'not_registered' });
    // A key the box does not know needs a stamped card; the answer names no lane.
    const unstamped = await createCard({ signer: bob.signer, enc: bob.enc.multikey, relays: [b.origin] });
    const refused = await b.send('POST', `${P}/cards`, unstamped);
    expect(await refused.json()).toEqual({ error: { code: 'stamp_required', message: 'stamp required' } });
    const bobCard = await createCard({
      signer: bob.signer,
      enc: bob.enc.multikey,
      relays: [b.origin],
      stampBits: CARD_BITS,
    });
    const posted = await b.send('POST', `${P}/cards`, bobCard);
    expect(posted.status).toBe(201);
    expect(await posted.json()).toEqual({ key: bob.key });
    expect(await errorOf(await b.send('POST', `${P}/events`, e))).toEqual({ status: 403, code: 'not_registered' });
    expect((await register(b, alice)).status).toBe(201);
    expect((await b.send('POST', `${P}/events`, e)).status).toBe(202);

    const lookup = await b.send('POST', `${P}/cards/lookup`, { key: bob.key });
    expect(lookup.status).toBe(200);
    expect(await lookup.json()).toEqual(bobCard);
    const older = await createCard({
      signer: bob.signer,
      enc: bob.enc.multikey,
      relays: ['https://other.example'],
      ts: new Date(Date.now() - 60_000),
    });
    expect((await b.send('POST', `${P}/cards`, older)).status).toBe(200);
    const newer = await createCard({
      signer: bob.signer,
      enc: bob.enc.multikey,
      relays: ['https://other.example'],
      ts: new Date(Date.now() + 60_000),
    });
    expect((await b.send('POST', `${P}/cards`, newer)).status).toBe(201);
    expect(await (await b.send('POST', `${P}/cards/lookup`, { key: bob.key })).json()).toEqual(newer);
    expect(await errorOf(await b.send('POST', `${P}/cards/lookup`, { key: party().key }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    const forged = { ...bobCard, relays: ['https://evil.example'] };
    expect(await errorOf(await b.send('POST', `${P}/cards`, forged))).toEqual({
      status: 400,
      code: 'invalid_card',
      reason: 'signature',
    });
    expect(await errorOf(await b.send('POST', `${P}/cards/lookup`, { key: 'x' }))).toEqual({
      status: 400,
      code: 'bad_request',
    });
  });

  it('relay-only mode: no card routes (404), publish needs no cards', async () => {
    const b = await box(kind, { limits: { directory: false } });
    const [alice, bob] = [party(), party()];
    expect((await (await b.send('GET', `${P}/limits`)).json()).directory).toBe(false);
    expect(await errorOf(await register(b, alice))).toEqual({ status: 404, code: 'not_found' });
    expect(await errorOf(await b.send('POST', `${P}/cards/lookup`, { key: alice.key }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key] });
    expect((await b.send('POST', `${P}/events`, await event(alice, bob))).status).toBe(202);
  });

  describe('store refusals map to their code and status', () => {
    it('stamp_required 403: a stranger without a stamp of stranger_bits', async () => {
      const b = await box(kind, { limits: { strangerBits: 4 } });
      const [alice, bob] = [party(), party()];
      const r = await b.send('POST', `${P}/events`, await event(alice, bob, { bits: 2 }));
      expect(await errorOf(r)).toEqual({ status: 403, code: 'stamp_required' });
      expect((await b.send('POST', `${P}/events`, await event(alice, bob, { bits: 4 }))).status).toBe(202);
    });

    it('sender_limit 429: over the per-pair count', async () => {
      const b = await box(kind, { limits: { strangerBits: 0 } });
      const [alice, bob] = [party(), party()];
      for (let i = 0; i < 3; i++)
        expect((await b.send('POST', `${P}/events`, await event(alice, bob))).status).toBe(202);
      const r = await b.send('POST', `${P}/events`, await event(alice, bob));
      expect(await errorOf(r)).toEqual({ status: 429, code: 'sender_limit' });
      expect(await b.store.totals()).toMatchObject({ count: 3 });
    });

    it('recipient_full 507: only the publisher own events left to evict', async () => {
      const b = await box(kind, { limits: { recipientBytes: 2000 } });
      const [alice, bob] = [party(), party()];
      await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key] });
      expect((await b.send('POST', `${P}/events`, await event(alice, bob))).status).toBe(202);
      expect((await b.send('POST', `${P}/events`, await event(alice, bob))).status).toBe(202);
      const r = await b.send('POST', `${P}/events`, await event(alice, bob));
      expect(await errorOf(r)).toEqual({ status: 507, code: 'recipient_full' });
    });

    it('box_full 503: the publisher is the largest holder', async () => {
      const b = await box(kind, { limits: { boxBytes: 2000 } });
      const [alice, bob] = [party(), party()];
      await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key] });
      expect((await b.send('POST', `${P}/events`, await event(alice, bob))).status).toBe(202);
      expect((await b.send('POST', `${P}/events`, await event(alice, bob))).status).toBe(202);
      const r = await b.send('POST', `${P}/events`, await event(alice, bob));
      expect(await errorOf(r)).toEqual({ status: 503, code: 'box_full' });
    });
  });
});

describe('box API housekeeping', () => {
  it('sweeps expired events on its own timer and stops it on close()', async () => {
    // Intervals are faked (timeouts are not: the HTTP exchanges use them), so the sweeper's timer
    // is counted and fired by the test, and closing is seen to remove it.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      let now = Date.now();
      const before = vi.getTimerCount();
      const b = await box('memory', { sweepIntervalMs: 20, now: () => now });
      expect(vi.getTimerCount()).toBe(before + 1);
      const [alice, bob] = [party(), party()];
      await b.signed(bob, 'PUT', `${P}/allow`, { contacts: [alice.key] });
      const e = await event(alice, bob, { exp: new Date(now + 60_000) });
      expect((await b.send('POST', `${P}/events`, e)).status).toBe(202);
      now += 61_000;
      await vi.advanceTimersByTimeAsync(20);
      await expect.poll(async () => (await b.store.totals()).count, { timeout: 2000 }).toBe(0);
      await b.app.close();
      expect(vi.getTimerCount()).toBe(before);
    } finally {
      vi.useRealTimers();
    }
  });

  it('limits requests per key with a token bucket (rate_limited 429)', async () => {
    const b = await box('memory', { rateLimit: { perSecond: 0.001, burst: 3 } });
    const bob = party();
    for (let i = 0; i < 3; i++) expect((await b.signed(bob, 'GET', `${P}/allow`)).status).toBe(200);
    expect(await errorOf(await b.signed(bob, 'GET', `${P}/allow`))).toEqual({ status: 429, code: 'rate_limited' });
    expect((await b.signed(party(), 'GET', `${P}/allow`)).status).toBe(200);
  });

  it('limits requests per source when the host names one (4x a key’s rate by default)', async () => {
    const b = await box('memory', {
      rateLimit: { perSecond: 0.001, burst: 2 },
      sourceRateLimit: { burst: 2 },
      sourceOf: (c) => c.req.header('x-test-source'),
    });
    const h = { 'x-test-source': 'c1' };
    expect((await b.send('GET', `${P}/limits`, undefined, h)).status).toBe(200);
    expect((await b.send('GET', `${P}/limits`, undefined, h)).status).toBe(200);
    expect(await errorOf(await b.send('GET', `${P}/limits`, undefined, h))).toEqual({
      status: 429,
      code: 'rate_limited',
    });
  });

  it('refuses a configuration whose directory flag disagrees with the store, or a bad origin', async () => {
    const store = new MemoryBoxStore({ directory: true });
    expect(() => createBoxApp({ store, origin: 'https://box.example', directory: false })).toThrow(RangeError);
    for (const origin of ['http://box.example', 'https://box.example/ohan', 'ftp://x']) {
      expect(() => createBoxApp({ store, origin, directory: true })).toThrow(RangeError);
    }
    const app = createBoxApp({ store, origin: 'http://127.0.0.1:8080', directory: true, sweepIntervalMs: 0 });
    expect((await app.request('/nope')).status).toBe(404);
  });
});
