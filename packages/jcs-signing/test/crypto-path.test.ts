import { describe, expect, it } from 'vitest';
import { cryptoPath } from '../src/index.js';

describe('crypto path', () => {
  it('runs the backend this test project asked for (node:crypto or noble)', () => {
    // vitest.workspace.ts runs this package twice: once with the `node` export condition, once without.
    expect(cryptoPath).toBe(process.env.WMP_CRYPTO_PATH);
  });
});
