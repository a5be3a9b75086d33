import { isDeepStrictEqual } from 'node:util';
import { generateKeypair } from '@wmp/jcs-signing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createEvent,
  generateEncKeypair,
  MemoryNonceCache,
  OhanOpenError,
  openEvent,
  verifyCard,
  verifyEvent,
  verifyRequest,
} from '../src/index.js';

const alice = generateKeypair();
const bob = generateKeypair();
const bobEnc = generateEncKeypair();
const event = await createEvent({
  envelope: { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { wmp: { version: '0.1' }, body: 'hi' } },
  to: { key: bob.multikey, enc: bobEnc.multikey },
  from: alice,
});

/** One field of the event replaced by an arbitrary value, or one added. */
const mutation = fc.tuple(fc.constantFrom(...Object.keys(event), 'extra', 'stamp', 'seq'), fc.anything());

/** The OhanOpenError `run` threw; fails when it returned instead. */
function openRefusal(run: () => unknown): OhanOpenError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(OhanOpenError);
    return e as OhanOpenError;
  }
  return expect.fail('opened');
}

describe('OHAN fuzzing', () => {
  it('verifyEvent never throws and refuses every mutated event', () => {
    expect(verifyEvent(event).ok).toBe(true);
    fc.assert(
      fc.property(mutation, ([key, value]) => {
        // Only a box's seq (a safe integer) may be added without invalidating the event.
        const allowed = key === 'seq' && Number.isSafeInteger(value);
        fc.pre(allowed || !isDeepStrictEqual(value, (event as unknown as Record<string, unknown>)[key]));
        expect(verifyEvent({ ...event, [key]: value }).ok).toBe(allowed);
      }),
      { numRuns: 1500 },
    );
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(verifyEvent(v).ok).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('a flipped character in any string field is refused', () => {
    for (const [key, value] of Object.entries(event)) {
      if (typeof value !== 'string') continue;
      for (let i = 0; i < value.length; i += Math.max(1, Math.floor(value.length / 40))) {
        const ch = value[i] === 'a' ? 'b' : 'a';
        const mutated = { ...event, [key]: value.slice(0, i) + ch + value.slice(i + 1) };
        expect(verifyEvent(mutated).ok, `${key}[${i}]`).toBe(false);
      }
    }
  });

  it('openEvent refuses random payloads and keys with OhanOpenError decrypt', () => {
    expect(openEvent(event, bobEnc.secretKey).message).toMatchObject({ method: 'wmp.message.deliver' });
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.uint8Array({ minLength: 0, maxLength: 40 }), (epk, payload, key) => {
        expect(openRefusal(() => openEvent({ to: event.to, epk, payload }, key)).reason).toBe('decrypt');
      }),
      { numRuns: 1000 },
    );
    // The right key and epk, random nonce, tag and ciphertext of sizes the seal can have (12 + 16
    // + 256n bytes, so they reach AES-GCM) or not: refused, by the tag or before it.
    const sealedSize = fc.integer({ min: 1, max: 3 }).map((n) => 12 + 16 + 256 * n);
    const size = fc.oneof(sealedSize, fc.integer({ min: 0, max: 800 }));
    fc.assert(
      fc.property(
        size.chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
        (bytes) => {
          const payload = Buffer.from(bytes).toString('base64');
          expect(openRefusal(() => openEvent({ ...event, payload }, bobEnc.secretKey)).reason).toBe('decrypt');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('verifyRequest and verifyCard refuse random headers and cards', async () => {
    const nonces = new MemoryNonceCache();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `OHAN-Sig ${s}`),
          fc.constant(null),
        ),
        async (header) => {
          const verdict = await verifyRequest(header, {
            origin: 'https://box.example',
            method: 'GET',
            target: '/',
            nonces,
          });
          expect(verdict.ok).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(verifyCard(v).ok).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});
