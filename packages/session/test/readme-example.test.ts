import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'session: true',
    'negotiated: {"messaging":{"max_size":65536},"flows":{"max_concurrent":4}}',
    'flow step: awaiting_review',
    'flow result: {"approved":true}',
    'spoofed sender: -31002',
    'missed while away: 0',
    'still works: true',
  ]);
}

describeReadmeExample({ testUrl: import.meta.url, expectOutput });
