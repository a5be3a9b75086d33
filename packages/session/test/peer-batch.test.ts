// Peer.requestBatch: requests of one method in one frame (a JSON-RPC batch), each entry answered
// on its own promise, in order; an entry's error fails only that entry; a frame that cannot be
// sent, a closed connection or too many pending fail them all.
import { ErrorCode, InvalidParamsError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import { ConnectionClosedError, InMemoryTransport, Peer, PeerError } from '../src/index.js';

async function pair(options: ConstructorParameters<typeof Peer>[1] = {}) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Peer(a, options);
  const server = new Peer(b);
  await Promise.all([client.start(), server.start()]);
  // Every frame the client sends, as the server's transport received it.
  const frames: unknown[] = [];
  const receive = b.onmessage!;
  b.onmessage = (frame, extra) => {
    frames.push(JSON.parse(String(frame)));
    receive(frame, extra);
  };
  return { client, server, frames, a };
}

describe('Peer.requestBatch', () => {
  it('sends one frame and settles each entry with its own answer, in order', async () => {
    const { client, server, frames } = await pair();
    server.setRequestHandler('take', (params) => {
      const { n } = params as { n: number };
      if (n === 2) throw new InvalidParamsError({ reason: 'two' });
      return { took: n };
    });
    const answers = client.requestBatch(
      'take',
      [1, 2, 3].map((n) => ({ n })),
    );
    const settled = await Promise.allSettled(answers);
    expect(frames).toHaveLength(1);
    expect(Array.isArray(frames[0])).toBe(true);
    expect((frames[0] as { params: { n: number } }[]).map((m) => m.params.n)).toEqual([1, 2, 3]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: { took: 1 } });
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { code: ErrorCode.InvalidParams } });
    expect(settled[2]).toEqual({ status: 'fulfilled', value: { took: 3 } });
    expect(client.pendingRequests).toBe(0);
  });

  it('fails every entry when the connection closes before the answers', async () => {
    const { client, server } = await pair();
    server.setRequestHandler('never', () => new Promise(() => undefined));
    const answers = client.requestBatch('never', [{}, {}]);
    await client.close();
    for (const answer of answers) await expect(answer).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(client.pendingRequests).toBe(0);
    const late = client.requestBatch('never', [{}]);
    await expect(late[0]).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('refuses a batch that would pass maxPendingRequests, whole', async () => {
    const { client, server } = await pair({ maxPendingRequests: 3 });
    server.setRequestHandler('take', () => ({}));
    const answers = client.requestBatch('take', [{}, {}, {}, {}]);
    for (const answer of answers) await expect(answer).rejects.toBeInstanceOf(PeerError);
    expect(client.pendingRequests).toBe(0);
    await expect(Promise.all(client.requestBatch('take', [{}, {}, {}]))).resolves.toHaveLength(3);
  });

  it('fails every entry when its frame cannot be sent', async () => {
    const { client, a } = await pair();
    a.send = () => Promise.reject(new Error('socket gone'));
    const answers = client.requestBatch('take', [{}, {}]);
    for (const answer of answers) await expect(answer).rejects.toThrow('socket gone');
    expect(client.pendingRequests).toBe(0);
  });
});
