import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

describeReadmeExample({
  testUrl: import.meta.url,
  example: 'examples/mailbox.ts',
  expectOutput: (lines) => {
    expect(lines).toEqual([
      'bob card: stored, stored',
      'sent to A: stored, stamp 8 bits',
      'sent to B: stored, stamp 8 bits',
      'bob got: "Lunch on Friday?" from alice: true',
      'rejected: 0 errors: 0',
      'second fetch: 0 messages',
      'allow list has alice: true',
      'contact send stamp bits: 0, 0',
      'watch got: "See you there"',
    ]);
  },
});
