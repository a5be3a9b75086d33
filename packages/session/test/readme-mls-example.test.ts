import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'security: mls suite 1',
    'responder reads: Hello over MLS | was encrypted: true',
    'on the wire: wmp ciphertext to | body visible: false',
    'alice reads: Hi Alice',
    'clear deliver: -31003',
  ]);
}

describeReadmeExample({ testUrl: import.meta.url, example: 'examples/mls.ts', expectOutput });
