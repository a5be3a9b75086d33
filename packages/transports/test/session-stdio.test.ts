import { type ChildProcess, spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { generateKeypair } from '@wmp/jcs-signing';
import { Peer, WmpSession } from '@wmp/session';
import { afterAll, describe, expect, it } from 'vitest';
import { describeVectors, rawClientFrom } from '../../session/test/vector-harness.js';
import { StdioTransport } from '../src/node.js';

// Every vector through a real WmpServer over NDJSON streams (a fresh pipe pair per connection).
describeVectors('stdio (NDJSON streams)', async (server) => {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  await server.connect(new StdioTransport({ input: toServer, output: toClient }));
  const client = new StdioTransport({ input: toClient, output: toServer });
  const raw = rawClientFrom(
    (m) => client.send(m as never),
    () => client.close(),
  );
  client.onmessage = (frame) => raw.push(typeof frame === 'string' ? frame : new TextDecoder().decode(frame));
  await client.start();
  return raw;
});

const root = fileURLToPath(new URL('../../../', import.meta.url));
const serverScript = fileURLToPath(new URL('./fixtures/stdio-server.ts', import.meta.url));

describe('a WMP server in a child process, over its real stdin/stdout', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) c.kill();
  });

  it('creates, authenticates, runs a flow and closes a session', async () => {
    const child = spawn('node_modules/.bin/tsx', ['--conditions=@wmp/source', serverScript], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    const transport = new StdioTransport({ input: child.stdout!, output: child.stdin! });
    const peer = new Peer(transport);
    await peer.start();
    const session = await WmpSession.open(peer, {
      signer: generateKeypair(),
      capabilities: { messaging: {}, flows: {} },
    });
    expect(session.id).toMatch(/^ses-/);
    const { flowId, done } = await session.startFlow('approval', {});
    await session.request('wmp.flow.action', { flow_id: flowId, action: 'approve' });
    await expect(done).resolves.toEqual({ approved: true });
    // A frame that is not JSON gets a parse error and the server keeps serving.
    await expect(session.request('wmp.capability.list')).resolves.toMatchObject({ capabilities: { flows: {} } });
    await session.close();
    await peer.close();
  }, 30_000);
});
