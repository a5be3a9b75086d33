import { encodeX25519Multikey, generateKeypair, utf8 } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { validEventPreimage } from '../src/event.js';
import {
  checkEventShape,
  createEvent,
  generateEncKeypair,
  idPreimage,
  mintStamp,
  OhanOpenError,
  OhanSealError,
  openEvent,
  openPayload,
  sealEnvelope,
  stampStrength,
  unsignedPart,
  verifyEvent,
} from '../src/index.js';

const alice = generateKeypair();
const bob = generateKeypair();
const bobEnc = generateEncKeypair();
const toBob = { key: bob.multikey, enc: bobEnc.multikey };

function deliver(bodyLength: number) {
  return {
    jsonrpc: '2.0',
    id: 'msg-1',
    method: 'wmp.message.deliver',
    params: { wmp: { version: '0.1', sender: alice.did }, to: [bob.did], body: 'b'.repeat(bodyLength) },
  };
}

describe('seal and open', () => {
  it.each([0, 1, 251, 252, 253, 4096, 65_535, 65_536])('round-trips %i envelope bytes with fresh keys', (n) => {
    const recipient = generateEncKeypair();
    const envelope = crypto.getRandomValues(new Uint8Array(n));
    const sealed = sealEnvelope(envelope, { key: bob.multikey, enc: recipient.multikey });
    expect(openPayload({ to: bob.multikey, ...sealed }, recipient.secretKey)).toEqual(envelope);
    // Another recipient key cannot open it.
    expect(() => openPayload({ to: bob.multikey, ...sealed }, generateEncKeypair().secretKey)).toThrow(OhanOpenError);
  });

  it.each([10, 1000, 30_000, 65_000])('createEvent -> verifyEvent -> openEvent for a %i-byte body', async (n) => {
    const message = deliver(n);
    const event = await createEvent({ envelope: message, to: toBob, from: alice });
    const verdict = verifyEvent(event);
    expect(verdict).toEqual({ ok: true, id: event.id, strength: 0 });
    const opened = openEvent(event, bobEnc.secretKey);
    expect(opened.message).toEqual(message);
    expect(utf8(opened.envelope).length).toBeGreaterThan(n);
  });

  it('refuses to seal to a small-order key, a bad key, a non-message, a bad time or an oversized envelope', async () => {
    const smallOrder = encodeX25519Multikey(new Uint8Array(32)); // u = 0, a point of small order
    await expect(
      createEvent({ envelope: deliver(1), to: { key: bob.multikey, enc: smallOrder }, from: alice }),
    ).rejects.toEqual(new OhanSealError('small_order'));
    await expect(
      createEvent({ envelope: deliver(1), to: { key: bob.multikey, enc: 'z6LSnope' }, from: alice }),
    ).rejects.toMatchObject({
      reason: 'key',
    });
    await expect(
      createEvent({ envelope: deliver(1), to: { key: 'z6Mknope', enc: bobEnc.multikey }, from: alice }),
    ).rejects.toMatchObject({
      reason: 'key',
    });
    await expect(createEvent({ envelope: '{"not":"rpc"}', to: toBob, from: alice })).rejects.toMatchObject({
      reason: 'envelope',
    });
    await expect(
      createEvent({
        envelope: deliver(1),
        to: toBob,
        from: alice,
        ts: '2026-11-29T12:00:00Z',
        exp: '2027-01-29T12:00:00Z',
      }),
    ).rejects.toMatchObject({ reason: 'time' });
    await expect(createEvent({ envelope: deliver(80_000), to: toBob, from: alice })).rejects.toMatchObject({
      reason: 'too_large',
    });
  });

  it('refuses an event whose JSON is over the size limit', async () => {
    const event = await createEvent({ envelope: deliver(3000), to: toBob, from: alice });
    expect(verifyEvent(event, { maxEventBytes: 2048 })).toEqual({ ok: false, reason: 'too_large' });
  });
});

describe('stamps', () => {
  it('a 12-bit stamp verifies with strength 12, and a stronger claim fails', async () => {
    const event = await createEvent({ envelope: deliver(5), to: toBob, from: alice, stampBits: 12 });
    expect(stampStrength(event)).toBe(12);
    const verdict = verifyEvent(event);
    expect(verdict).toEqual({ ok: true, id: event.id, strength: 12 });
    expect(Number.parseInt(event.id.slice(0, 3), 16)).toBe(0);
  });

  it('mining reports progress, yields to other tasks, and stops when aborted', async () => {
    const unsigned = unsignedPart(await createEvent({ envelope: deliver(5), to: toBob, from: alice }));
    const controller = new AbortController();
    const progress: number[] = [];
    let reportsAtAbort = -1;
    const mining = mintStamp(unsigned, 60, {
      signal: controller.signal,
      onProgress: (p) => {
        progress.push(p.tries);
        expect(p.expectedTries).toBe(2 ** 60);
        // Abort from another task once mining is under way: it runs only if mining yields.
        if (progress.length === 1) {
          setImmediate(() => {
            reportsAtAbort = progress.length;
            controller.abort();
          });
        }
      },
    });
    await expect(mining).rejects.toMatchObject({ name: 'AbortError' });
    expect(reportsAtAbort).toBeGreaterThan(0);
    expect(progress.length).toBe(reportsAtAbort);
    expect(progress).toEqual(progress.map((_, i) => (i + 1) * 0x10000));
  });

  it('refuses an impossible strength', async () => {
    const unsigned = unsignedPart(await createEvent({ envelope: deliver(5), to: toBob, from: alice }));
    await expect(mintStamp(unsigned, 256)).rejects.toThrow(RangeError);
    expect(stampStrength({})).toBe(0);
  });
});

describe('shape', () => {
  it('refuses a payload that is not canonical padded base64', async () => {
    const event = await createEvent({ envelope: deliver(7), to: toBob, from: alice });
    expect(checkEventShape(event)).toBeDefined();
    const p = event.payload;
    expect(checkEventShape({ ...event, payload: `-${p.slice(1)}` })).toBeUndefined();
    expect(checkEventShape({ ...event, payload: p.slice(0, -4) })).toBeDefined();
    expect(checkEventShape({ ...event, payload: p.slice(0, -1) })).toBeUndefined();
    // 'QR==' decodes to the same byte as 'QQ==' but is not the canonical encoding.
    expect(checkEventShape({ ...event, payload: `${p.slice(0, -4)}QR==` })).toBeUndefined();
    expect(checkEventShape({ ...event, payload: `${p.slice(0, -4)}QQ==` })).toBeDefined();
  });
});

describe('canonical preimage fast path', () => {
  it('equals the generic JCS for valid events, stamped or not', async () => {
    for (const stampBits of [undefined, 3]) {
      const event = await createEvent({
        envelope: deliver(7),
        to: toBob,
        from: alice,
        ...(stampBits ? { stampBits } : {}),
      });
      const shaped = checkEventShape(event)!;
      expect(validEventPreimage(shaped)).toBe(idPreimage(event));
    }
  });
});
