import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'refused: insufficient_claims, asked for given_name',
    'alice presented given_name=Alice',
    'approved: true by bob',
    'signed by bob, verified, hash sha-256',
  ]);
}

describeReadmeExample({ testUrl: import.meta.url, example: 'examples/identity-assertions.ts', expectOutput });
