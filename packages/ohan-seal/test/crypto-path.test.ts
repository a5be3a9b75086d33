import { cryptoPath as signingPath } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { cryptoPath } from '../src/index.js';

describe('crypto path', () => {
  it('runs the backend this test project asked for (node:crypto or noble), for sealing and for Ed25519', () => {
    // vitest.workspace.ts runs this package twice: once with the `node` export condition, once
    // with `#crypto` resolved to the portable entry (in this package and in @wmp/jcs-signing).
    expect(['node', 'portable']).toContain(process.env.WMP_CRYPTO_PATH);
    expect(cryptoPath).toBe(process.env.WMP_CRYPTO_PATH);
    expect(signingPath).toBe(process.env.WMP_CRYPTO_PATH);
  });
});
