import { describe, expect, it } from 'vitest';
import { type Frame, stageOf } from './profile-stages.js';

const at = (functionName: string, path: string): Frame => ({
  functionName,
  url: path.startsWith('node:') || path === '' ? path : `file:///repo/${path}`,
});
const ROOT = at('(root)', '');
const TICKS = at('processTicksAndRejections', 'node:internal/process/task_queues');

describe('stageOf (the per-message budget of bench/profile-summary.ts)', () => {
  it('gives a built-in its nearest caller of ours: node:crypto sign under the JWS is the relay_chain signature', () => {
    const stack = [
      at('signOneShot', 'node:internal/crypto/sig'),
      at('', 'packages/jcs-signing/src/crypto/node.ts'),
      at('signDetached', 'packages/jcs-signing/src/jws.ts'),
      at('relayChainWith', 'packages/jcs-signing/src/relay-chain.ts'),
      at('routedMessage', 'packages/relay-server/src/relay/routing/route.ts'),
      TICKS,
      ROOT,
    ];
    expect(stageOf(stack)).toBe('relay_chain signature (Ed25519)');
  });

  it('counts the JCS of a content hash as JCS, under the relay_chain entry', () => {
    const stack = [
      at('string', 'packages/jcs-signing/src/jcs.ts'),
      at('contentHash', 'packages/jcs-signing/src/relay-chain.ts'),
      at('relayChainWith', 'packages/jcs-signing/src/relay-chain.ts'),
      ROOT,
    ];
    expect(stageOf(stack)).toBe('JCS + content hash');
  });

  it('sends the same code as a forward or as a status, by who called it', () => {
    const send = [
      at('writeOrBuffer', 'node:internal/streams/writable'),
      at('send', 'node_modules/ws/lib/sender.js'),
      at('send', 'packages/transports/src/ws/ws-server.ts'),
      at('notify', 'packages/session/src/peer.ts'),
    ];
    expect(stageOf([...send, at('#send', 'packages/relay-server/src/relay/routing/forwarder.ts'), ROOT])).toBe(
      'forward (stringify + ws send)',
    );
    expect(stageOf([...send, at('send', 'packages/relay-server/src/relay/statuses/statuses.ts'), ROOT])).toBe(
      'status build/send',
    );
  });

  it('splits the writer: statements inside a flush, BEGIN/COMMIT in the writer itself, the append before it', () => {
    const flush = [
      at('#applyAtomic', 'packages/relay-server/src/storage/sqlite/write-queue.ts'),
      at('#write', 'packages/relay-server/src/storage/sqlite/write-queue.ts'),
      at('#flush', 'packages/relay-server/src/storage/sqlite/write-queue.ts'),
      ROOT,
    ];
    expect(stageOf([at('#append', 'packages/relay-server/src/storage/sqlite/sqlite-queue-store.ts'), ...flush])).toBe(
      'SQLite statements (INSERT, UPDATE, DELETE, totals)',
    );
    expect(stageOf(flush.slice(1))).toBe('SQLite BEGIN/COMMIT (fsync) + write queue');
    expect(
      stageOf([
        at('queueRecord', 'packages/relay-server/src/storage/contracts/queue-input.ts'),
        at('append', 'packages/relay-server/src/storage/sqlite/sqlite-queue-store.ts'),
        at('routeToRecipients', 'packages/relay-server/src/relay/routing/route.ts'),
        ROOT,
      ]),
    ).toBe('store append (record, caps)');
  });

  it("counts the UTF-8 byte count as its caller's: the route's text, or the queue's record", () => {
    const count = at('utf8Length', 'packages/jsonrpc-envelope/src/strict-json.ts');
    expect(stageOf([count, at('routeToRecipients', 'packages/relay-server/src/relay/routing/route.ts'), ROOT])).toBe(
      'route (deliver handler, stored text, fan-out)',
    );
    expect(
      stageOf([count, at('queueRecord', 'packages/relay-server/src/storage/contracts/queue-input.ts'), ROOT]),
    ).toBe('store append (record, caps)');
  });

  it("gives a cluster node's socket work to the PostgreSQL or Redis client that does it", () => {
    const read = [at('onStreamRead', 'node:internal/stream_base_commons'), ROOT];
    expect(stageOf([at('addFields', 'node_modules/.pnpm/pg@8.23.1/node_modules/pg/lib/result.js'), ...read])).toBe(
      'PostgreSQL client (pg: queries, protocol, rows)',
    );
    expect(
      stageOf([
        at('writev', ''),
        at('write', 'node_modules/.pnpm/pg-protocol@1.16.1/node_modules/pg-protocol/dist/serializer.js'),
        at('get', 'packages/relay-server/src/storage/postgres/postgres-session-store.ts'),
        ROOT,
      ]),
    ).toBe('PostgreSQL client (pg: queries, protocol, rows)');
    expect(
      stageOf([
        at('decode', 'node_modules/.pnpm/@redis+client@6.3.1/node_modules/@redis/client/dist/lib/RESP/decoder.js'),
        ...read,
      ]),
    ).toBe('Redis client + coordination (wake-ups, buckets, presence)');
    expect(stageOf([at('pragma', 'node_modules/better-sqlite3/lib/methods/pragma.js'), ROOT])).toBe(
      'SQLite checkpoints (worker thread)',
    );
  });

  it('keeps startup, idle and GC apart, and calls an unknown stack other', () => {
    expect(stageOf([at('compileSourceTextModule', 'node:internal/modules/esm/utils'), ROOT])).toBe(
      'startup (module loading)',
    );
    expect(stageOf([at('(idle)', '')])).toBe('idle');
    expect(stageOf([at('(garbage collector)', '')])).toBe('GC');
    expect(stageOf([at('fstat', ''), ROOT])).toBe('other');
  });
});
