import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

describeReadmeExample({
  testUrl: import.meta.url,
  example: 'examples/group.ts',
  expectOutput: (lines) => {
    expect(lines).toEqual([
      'epoch: 2 | members: alice, bob, carol',
      'bob reads: Hello group (from alice)',
      'carol reads: Hello group (from alice)',
      'carol removed at epoch 3',
      'bob reads: Just us two (from alice) | carol: ERR_GROUP_REMOVED',
      'bob after restart reads: While you were away (from alice)',
      'after two updates: epoch 5 and 5',
    ]);
  },
});
