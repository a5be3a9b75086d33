import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'wmp.message.deliver from did:example:alice to did:example:bob: Hello Bob',
    'ok: {"jsonrpc":"2.0","id":"req-1","result":{"message_id":"msg-0001","status":"queued"}}',
    'result status: queued',
    'duplicate key: {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"duplicate key"}}}',
    'too large: {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"message too large"}}}',
    expect.stringMatching(
      /^invalid params: \{"jsonrpc":"2\.0","id":"req-4","error":\{"code":-32602,"message":"Invalid params","data":\{"reason":"wmp: /,
    ),
    'unknown method: {"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}',
    'notification answered: false',
  ]);
}

describeReadmeExample({ testUrl: import.meta.url, expectOutput });
