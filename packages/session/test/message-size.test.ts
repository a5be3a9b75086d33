// A deliver is held to the `messaging.max_size` its session negotiated (decision 0360): the
// message's UTF-8 bytes as sent, one message per frame or each entry of a batch on its own.
import { describe, expect, it } from 'vitest';
import { InMemoryTransport, WmpServer } from '../src/index.js';

type Frame = Record<string, any>;

async function sessionWithMaxSize(maxSize: number) {
  const delivered: unknown[] = [];
  const server = new WmpServer({
    requireAuthentication: false,
    capabilities: { messaging: { max_size: 1_000_000 } },
    grantedCapabilities: ['relay'],
    hooks: { deliver: (params) => void delivered.push(params.body) },
  });
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const frames: Frame[] = [];
  client.onmessage = (f) => {
    const parsed = JSON.parse(String(f)) as Frame | Frame[];
    frames.push(...(Array.isArray(parsed) ? parsed : [parsed]));
  };
  await client.start();
  const answer = async (id: string) => {
    await expect.poll(() => frames.some((f) => f.id === id)).toBe(true);
    return frames.find((f) => f.id === id)!;
  };
  await client.send({
    jsonrpc: '2.0',
    id: 'create',
    method: 'wmp.session.create',
    params: {
      wmp: { version: '0.1', sender: 'did:key:z6Mkalice' },
      capabilities_offered: { messaging: { max_size: maxSize } },
    },
  });
  const created = await answer('create');
  expect(created.result.capabilities).toEqual({ messaging: { max_size: maxSize } });
  const deliver = (id: string, body: string) => ({
    jsonrpc: '2.0' as const,
    id,
    method: 'wmp.message.deliver',
    params: { wmp: { version: '0.1', session_id: created.result.wmp.session_id }, to: ['did:key:z6Mkbob'], body },
  });
  return { client, answer, deliver, delivered };
}

const tooLarge = (max: number) => ({ code: -32600, data: { reason: 'message too large', max_size: max } });

describe('messaging.max_size', () => {
  it('refuses a deliver over it (-32600, reason and max_size) and takes one under it', async () => {
    const { client, answer, deliver, delivered } = await sessionWithMaxSize(500);
    const fits = deliver('fits', 'x'.repeat(300));
    expect(JSON.stringify(fits).length).toBeLessThan(500);
    await client.send(fits);
    expect((await answer('fits')).error).toBeUndefined();
    const over = deliver('over', 'x'.repeat(450));
    expect(JSON.stringify(over).length).toBeGreaterThan(500);
    await client.send(over);
    expect((await answer('over')).error).toMatchObject(tooLarge(500));
    // Two-byte characters count twice: 240 of them are under 500 characters but over 500 bytes.
    await client.send(deliver('utf8', 'é'.repeat(240)));
    expect((await answer('utf8')).error).toMatchObject(tooLarge(500));
    expect(delivered).toEqual(['x'.repeat(300)]);
  });

  it('measures each entry of a batch on its own, not the batch', async () => {
    const { client, answer, deliver, delivered } = await sessionWithMaxSize(500);
    await client.send([deliver('small-1', 'a'.repeat(200)), deliver('big', 'b'.repeat(600)), deliver('small-2', 'c')]);
    expect((await answer('small-1')).error).toBeUndefined();
    expect((await answer('small-2')).error).toBeUndefined();
    expect((await answer('big')).error).toMatchObject(tooLarge(500));
    expect(delivered).toEqual(['a'.repeat(200), 'c']);
  });
});
