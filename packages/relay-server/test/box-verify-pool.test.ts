import { verifyEd25519 } from '@wmp/jcs-signing';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import {
  type EventSignatureCheck,
  type OhanEvent,
  prepareEventVerification,
  signEvent,
  unsignedPart,
  verifyEvent,
} from '@wmp/ohan-seal';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SignatureVerifyPool } from '../src/box-api/verify-pool.js';
import { BOX_API_PREFIX } from '../src/node.js';
import { event, party } from '../src/storage/testing/events.js';
import { type Box, errorOf, removeTempDirs, STORE_KINDS, startBox } from './fixtures/box-api-harness.js';

const DAY = 24 * 3600_000;

/** The Ed25519 check of a well-formed event (its signature may still be wrong). */
function checkOf(e: OhanEvent): EventSignatureCheck {
  const prepared = prepareEventVerification(e);
  if (!prepared.ok) throw new Error(`not well formed: ${prepared.reason}`);
  return prepared.check;
}

/** `e` with another event's signature: well formed, id right, signature wrong. */
const forged = (e: OhanEvent, other: OhanEvent): OhanEvent => ({ ...e, signature: other.signature });

const pools: SignatureVerifyPool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
});
function pool(threads: number, source?: string): SignatureVerifyPool {
  const p = new SignatureVerifyPool(threads, source);
  pools.push(p);
  return p;
}

async function mixedChecks(n: number): Promise<{ checks: EventSignatureCheck[]; valid: boolean[] }> {
  const [alice, bob, carol] = [party(), party(), party()];
  const base = await event(alice, bob);
  const checks: EventSignatureCheck[] = [];
  for (let i = 0; i < n; i++) {
    const e = await signEvent({ ...unsignedPart(base), exp: rfc3339(Date.parse(base.exp) - i * 1000) }, alice.signer);
    // Every third is forged: the signature of the previous event, or a valid one by Carol's key.
    if (i % 3 === 1) checks.push(checkOf(forged(e, base)));
    else if (i % 3 === 2) checks.push({ ...checkOf(e), publicKey: carol.signer.publicKey });
    else checks.push(checkOf(e));
  }
  return { checks, valid: checks.map((c) => verifyEd25519(c.publicKey, c.message, c.signature)) };
}

describe('SignatureVerifyPool', () => {
  it('answers every check as verifyEd25519 does, in order, across batches and workers', async () => {
    const { checks, valid } = await mixedChecks(240);
    expect(valid.filter(Boolean)).toHaveLength(80);
    const p = pool(2);
    // One turn of the event loop (split over both workers), then several smaller ones.
    expect(await Promise.all(checks.map((c) => p.verify(c)))).toEqual(valid);
    expect(p.threads).toBe(2);
    const one = [];
    for (let i = 0; i < 12; i++) one.push(await p.verify(checks[i]!));
    expect(one).toEqual(valid.slice(0, 12));
  });

  it('refuses a bad thread count', () => {
    expect(() => new SignatureVerifyPool(0)).toThrow(RangeError);
    expect(() => new SignatureVerifyPool(1.5)).toThrow(RangeError);
  });

  it('finishes the checks of a worker that dies, replaces it, and stops using workers after three deaths', async () => {
    const { checks, valid } = await mixedChecks(30);
    const dying = "require('node:worker_threads').parentPort.on('message', () => process.exit(3));";
    const p = pool(1, dying);
    for (let round = 0; round < 4; round++) {
      expect(await Promise.all(checks.map((c) => p.verify(c)))).toEqual(valid);
    }
    expect(p.threads).toBe(0);
    expect(await p.verify(checks[0]!)).toBe(valid[0]);
  });

  it('verifies on the calling thread once closed, including checks queued before', async () => {
    const { checks, valid } = await mixedChecks(9);
    const p = pool(1);
    const queued = Promise.all(checks.map((c) => p.verify(c)));
    await p.close();
    expect(await queued).toEqual(valid);
    expect(await Promise.all(checks.map((c) => p.verify(c)))).toEqual(valid);
    expect(p.threads).toBe(0);
  });
});

describe.each(STORE_KINDS)('publish with verify workers (%s store)', (kind) => {
  const boxes: Box[] = [];
  afterEach(async () => {
    for (const b of boxes.splice(0)) await b.close();
  });
  afterAll(removeTempDirs);
  const P = BOX_API_PREFIX;

  it('gives the answers verifyEvent gives: stored, forged signature, and signature before time', async () => {
    const clock = { now: Date.now() };
    const b = await startBox(kind, { verifyThreads: 2, now: () => clock.now, limits: { strangerBits: 0 } });
    boxes.push(b);
    const [alice, bob] = [party(), party()];
    const good = await event(alice, bob);
    const other = await event(alice, bob);
    const cases: [OhanEvent, number, string | undefined][] = [
      [good, 202, undefined],
      [good, 200, undefined],
      [forged(other, good), 400, 'signature'],
    ];
    for (const [e, status, reason] of cases) {
      const r = await b.send('POST', `${P}/events`, e);
      expect(r.status).toBe(status);
      if (reason !== undefined) expect(await errorOf(r)).toEqual({ status, code: 'invalid_event', reason });
    }
    // Forty days on, both events are out of their time window: the signature is still checked first.
    clock.now += 40 * DAY;
    for (const e of [other, forged(other, good)]) {
      const expected = verifyEvent(e, { now: clock.now });
      expect(expected.ok).toBe(false);
      const r = await b.send('POST', `${P}/events`, e);
      expect(await errorOf(r)).toEqual({
        status: 400,
        code: 'invalid_event',
        reason: expected.ok ? undefined : expected.reason,
      });
    }
    expect(await b.store.totals()).toMatchObject({ count: 1 });
  });

  it('stores many concurrent publishes, forged ones refused among them', async () => {
    const b = await startBox(kind, {
      verifyThreads: 2,
      limits: { strangerBits: 0, lanes: { contact: 500, stranger: 500 } },
    });
    boxes.push(b);
    const [alice, bob] = [party(), party()];
    const events = await Promise.all(Array.from({ length: 60 }, () => event(alice, bob)));
    const sent = events.map((e, i) => (i % 4 === 3 ? forged(e, events[0]!) : e));
    const statuses = await Promise.all(sent.map(async (e) => (await b.send('POST', `${P}/events`, e)).status));
    expect(statuses).toEqual(sent.map((_, i) => (i % 4 === 3 ? 400 : 202)));
    expect(await b.store.totals()).toMatchObject({ count: 45 });
  });
});
