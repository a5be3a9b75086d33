import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual(['websocket session: true', 'http session: true', 'capabilities over http: {"messaging":{}}']);
}

describeReadmeExample({ testUrl: import.meta.url, expectOutput });
