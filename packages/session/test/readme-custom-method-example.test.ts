import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'negotiated: messaging org.example.echo',
    'echo: {"echo":"HELLO"}',
    'bad params: -32602',
    'not negotiated: -31005',
    'unknown method: -32601',
    'wmp.* refused: reserved_name',
  ]);
}

describeReadmeExample({
  testUrl: import.meta.url,
  example: 'examples/custom-method.ts',
  expectOutput,
  importExample: () => import('../examples/custom-method.js'),
});
