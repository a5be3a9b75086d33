import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

/** What the example prints, line by line, apart from the random DID. */
function expectOutput(lines: string[], path: string): void {
  expect(lines).toEqual([
    `crypto path: ${path}`,
    expect.stringMatching(/^alice: did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+$/),
    'jcs: {"a":"héllo","b":[1e+21,0.1,0],"c":{"y":null,"z":true}}',
    'signed by: alice',
    'tampered: -31010 signature',
    'forged: -31010 signer_mismatch',
    'relay hops: 1',
    'still signed by alice: true',
    'challenge key is alice: true',
    'wrong session: -31002 invalid_signed_challenge',
    'a minute late: -31011 clock_skew',
  ]);
}

describeReadmeExample({
  testUrl: import.meta.url,
  expectOutput,
  importExample: () => import('../examples/quick-start.js'),
});
