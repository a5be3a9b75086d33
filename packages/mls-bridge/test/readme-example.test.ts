import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

const expected = [
  'members: 2 epoch: 1',
  'on the wire: wmp ciphertext | body visible: false',
  'bob reads: Hello Bob',
  'alice reads: Hi Alice',
  'after restart: still there? | from alice: true',
  'replayed: -31004 decrypt_failed',
  'bob after removal: -31004 removed',
];

function expectOutput(lines: string[]): void {
  expect(lines).toEqual(expected);
}

describeReadmeExample({ testUrl: import.meta.url, expectOutput });
