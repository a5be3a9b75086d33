// A box that lies: a real HTTP server that checks the mailbox's signed requests like a box, then
// serves what the test gives it. The mailbox must verify everything itself: events for another
// key, altered events, broken pages and cards for the wrong key are refused, never handed over.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCard, createEvent, MemoryNonceCache, type OhanEvent, verifyRequest } from '@wmp/ohan-seal';
import { afterEach, describe, expect, it } from 'vitest';
import { Identity, Mailbox } from '../src/index.js';
import { deliver } from './mailbox-relays.js';

interface HostileBox {
  readonly origin: string;
  /** Answers per `METHOD path` (path without query); each gets the caller's key. */
  answers: Map<string, (key: string, body: string) => { status: number; body: unknown }>;
  readonly delivered: string[];
  readonly targets: string[];
  close(): Promise<void>;
}

let boxes: HostileBox[] = [];
afterEach(async () => {
  for (const b of boxes) await b.close();
  boxes = [];
});

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

async function startHostileBox(): Promise<HostileBox> {
  const nonces = new MemoryNonceCache();
  let origin = '';
  const box: HostileBox = {
    get origin() {
      return origin;
    },
    answers: new Map(),
    delivered: [],
    targets: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const target = req.url ?? '/';
    box.targets.push(`${req.method} ${target}`);
    const path = target.split('?')[0]!;
    let key = '';
    if (req.headers.authorization !== undefined) {
      const verdict = await verifyRequest(req.headers.authorization, {
        origin,
        method: req.method ?? 'GET',
        target,
        body: body === '' ? undefined : body,
        nonces,
      });
      if (!verdict.ok) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"error":{"code":"unauthorized","message":"x"}}');
        return;
      }
      key = verdict.key;
    }
    if (path === '/ohan/v1/delivered') {
      const { ids } = JSON.parse(body) as { ids: string[] };
      box.delivered.push(...ids);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ removed: ids.length }));
      return;
    }
    const answer = box.answers.get(`${req.method} ${path}`);
    if (!answer) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found","message":"x"}}');
      return;
    }
    const { status, body: out } = answer(key, body);
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(typeof out === 'string' ? out : JSON.stringify(out));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  boxes.push(box);
  return box;
}

async function sealed(from: Identity, to: Identity, body: string): Promise<OhanEvent> {
  return createEvent({
    envelope: deliver(from, to, body),
    to: { key: to.signingKey, enc: to.encKey },
    from: from.keypair,
  });
}

function page(events: readonly OhanEvent[] | readonly Record<string, unknown>[], from = 0) {
  const served = events.map((e, i) => ({ ...e, seq: from + i + 1 }));
  return { events: served, next: from + served.length, more: false };
}

describe('Mailbox against a hostile box', () => {
  it('refuses misaddressed and altered events, reports them, hands over only the genuine one', async () => {
    const box = await startHostileBox();
    const bob = Identity.generate();
    const alice = Identity.generate();
    const carol = Identity.generate();
    const genuine = await sealed(alice, bob, 'genuine');
    const forCarol = await sealed(alice, carol, 'for carol'); // validly signed, addressed to Carol
    const other = await sealed(alice, bob, 'other');
    const altered = { ...other, payload: genuine.payload }; // a payload moved from another event
    const readdressed = { ...forCarol, to: bob.signingKey }; // Carol's event relabelled for Bob
    const extraField = { ...(await sealed(alice, bob, 'extra')), note: 'x' };
    box.answers.set('GET /ohan/v1/events', () => ({
      status: 200,
      body: page([forCarol, altered, readdressed, extraField, genuine] as unknown as Record<string, unknown>[]),
    }));
    const mailbox = new Mailbox({ identity: bob, relays: [box.origin] });
    const result = await mailbox.fetch();
    expect(result.messages.map((m) => m.eventId)).toEqual([genuine.id]);
    expect(result.rejected).toEqual([
      { relay: box.origin, eventId: forCarol.id, reason: 'misaddressed' },
      { relay: box.origin, eventId: other.id, reason: 'id' },
      { relay: box.origin, eventId: forCarol.id, reason: 'id' },
      { relay: box.origin, eventId: extraField.id, reason: 'shape' },
    ]);
    expect(result.errors).toEqual([]);
    // Refused events are acknowledged too: they would never open, and only Bob's queue is touched.
    expect(box.delivered).toEqual([forCarol.id, other.id, forCarol.id, extraField.id, genuine.id]);
    expect(box.targets[0]).toBe('GET /ohan/v1/events?after=0&limit=100');
  });

  it('reports a broken page as bad_response and keeps its cursor', async () => {
    const box = await startHostileBox();
    const bob = Identity.generate();
    const e = await sealed(Identity.generate(), bob, 'x');
    const mailbox = new Mailbox({ identity: bob, relays: [box.origin] });
    const broken = [
      'not json',
      { events: 'nope', next: 0, more: false },
      { events: [{ ...e, seq: 1 }], next: 5, more: false }, // next does not match the last seq
      { events: [], next: 0, more: true }, // more, but no progress: would loop forever
      {
        events: [
          { ...e, seq: 2 },
          { ...e, seq: 2 },
        ],
        next: 2,
        more: false,
      }, // seq not increasing
      { events: [{ ...e, seq: -1 }], next: -1, more: false },
    ];
    for (const body of broken) {
      box.answers.set('GET /ohan/v1/events', () => ({ status: 200, body }));
      const result = await mailbox.fetch();
      expect(result.messages).toEqual([]);
      expect(result.errors.map((x) => [x.code, x.relay])).toEqual([['bad_response', box.origin]]);
    }
    expect(box.delivered).toEqual([]);
    expect(box.targets.every((t) => t === 'GET /ohan/v1/events?after=0&limit=100')).toBe(true);
  });

  it('maps error answers to their codes, and unknown ones to relay_error', async () => {
    const box = await startHostileBox();
    const bob = Identity.generate();
    const mailbox = new Mailbox({ identity: bob, relays: [box.origin] });
    box.answers.set('GET /ohan/v1/events', () => ({
      status: 429,
      body: { error: { code: 'rate_limited', message: 'too many requests' } },
    }));
    expect((await mailbox.fetch()).errors).toMatchObject([{ code: 'rate_limited', status: 429, relay: box.origin }]);
    box.answers.set('GET /ohan/v1/events', () => ({ status: 502, body: '<html>bad gateway</html>' }));
    expect((await mailbox.fetch()).errors).toMatchObject([{ code: 'relay_error', status: 502 }]);
  });

  it('refuses a looked-up card that is not the key’s own, or does not verify', async () => {
    const box = await startHostileBox();
    const bob = Identity.generate();
    const mallory = Identity.generate();
    const malloryCard = await createCard({ signer: mallory.keypair, enc: mallory.encKey, relays: [box.origin] });
    const mailbox = new Mailbox({ identity: Identity.generate(), relays: [box.origin] });
    box.answers.set('POST /ohan/v1/cards/lookup', () => ({ status: 200, body: malloryCard }));
    await expect(mailbox.lookupCard(bob.did, box.origin)).rejects.toMatchObject({
      code: 'bad_response',
      reason: 'key',
    });
    box.answers.set('POST /ohan/v1/cards/lookup', () => ({
      status: 200,
      body: { ...malloryCard, key: bob.signingKey },
    }));
    await expect(mailbox.lookupCard(bob.did, box.origin)).rejects.toMatchObject({
      code: 'bad_response',
      reason: 'signature',
    });
  });

  it('refuses limits that are not a limits document before sealing anything', async () => {
    const box = await startHostileBox();
    const bob = Identity.generate();
    const card = await bob.createCard([box.origin]);
    const alice = new Mailbox({ identity: Identity.generate(), relays: [box.origin] });
    box.answers.set('GET /ohan/v1/limits', () => ({
      status: 200,
      body: { protocol: 'ohan.relay.1', stranger_bits: 999 },
    }));
    const sent = await alice.send(card, deliver(alice.identity, bob, 'x'));
    expect(sent.outcomes).toMatchObject([{ ok: false, error: { code: 'bad_response' } }]);
    expect(box.targets).toEqual(['GET /ohan/v1/limits']);
  });
});
