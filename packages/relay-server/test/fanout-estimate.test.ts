import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLengthAtLeast } from '../src/relay/sessions/deliver.js';

describe('jsonLengthAtLeast (the fan-out check before signing)', () => {
  it('never exceeds the UTF-8 bytes of the JSON text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonLengthAtLeast(value)).toBeLessThanOrEqual(Buffer.byteLength(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it('is close for the strings that make a message large', () => {
    const body = { body: 'x'.repeat(100_000), content_type: 'application/json', to: ['did:key:z6Mk'] };
    expect(jsonLengthAtLeast(body)).toBe(JSON.stringify(body).length);
  });
});
