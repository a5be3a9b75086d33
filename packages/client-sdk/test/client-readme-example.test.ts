import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

describeReadmeExample({
  testUrl: import.meta.url,
  example: 'examples/live-chat.ts',
  expectOutput: (lines) => {
    expect(lines).toEqual([
      'alice over websocket - bob over http',
      'bob got: hello bob (from alice)',
      'carol got: hi carol (from alice)',
      'alice saw: queued -> delivered',
      'bob got: still there? (from alice) - bob is connected',
      'group of 3 - bob: hello group (from alice) - carol: hello group (from alice)',
      'unknown method: -32601',
    ]);
  },
});
