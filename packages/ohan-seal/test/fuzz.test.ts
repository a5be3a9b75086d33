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

/** Replaces one field of the event by an arbitrary value, or adds one. */
const mutatedEvent = fc
  .tuple(fc.constantFrom(...Object.keys(event), 'extra', 'stamp', 'seq'), fc.anything())
  .map(([key, value]) => ({ ...event, [key]: value }));

describe('OHAN fuzzing', () => {
  it('verifyEvent never throws and refuses every mutated event', () => {
    fc.assert(
      fc.property(mutatedEvent, (e) => {
        const verdict = verifyEvent(e);
        // Only a box's seq (a safe integer) may change without invalidating the event.
        if (verdict.ok) expect(Number.isSafeInteger((e as { seq?: unknown }).seq)).toBe(true);
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

  it('openEvent throws only OhanOpenError on random payloads and keys', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.uint8Array({ minLength: 0, maxLength: 40 }), (epk, payload, key) => {
        try {
          openEvent({ to: event.to, epk, payload }, key);
        } catch (e) {
          expect(e).toBeInstanceOf(OhanOpenError);
        }
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 284, maxLength: 800 }), (bytes) => {
        try {
          openEvent({ ...event, payload: Buffer.from(bytes).toString('base64') }, bobEnc.secretKey);
        } catch (e) {
          expect(e).toBeInstanceOf(OhanOpenError);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('verifyRequest and verifyCard never throw', async () => {
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
