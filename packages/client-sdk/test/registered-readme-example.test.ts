import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

describeReadmeExample({
  testUrl: import.meta.url,
  example: 'examples/registered-delivery.ts',
  expectOutput: (lines) => {
    expect(lines).toEqual([
      'notice: consented_signed "contract" from alice',
      'accept: accepted',
      'bob got: the terms (signed by alice)',
      'bob got: happy new year (not before it was due: true)',
      'bob got: the invoice (from carol)',
    ]);
  },
});
