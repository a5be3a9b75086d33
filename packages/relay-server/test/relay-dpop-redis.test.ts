// DPoP at a relay whose replay cache is Redis (a real server of this file's own): each proof's
// jti is taken once, before and after an outage, and while Redis does not answer a proof is
// refused with -31007 `replay_cache_unavailable` (it is not "full"), the relay serving the rest.
import { generateKeypair } from '@wmp/jcs-signing';
import { WmpSession } from '@wmp/session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../test-support/services/index.js';
import { createRelay, type Relay, relayAuthenticators } from '../src/node.js';
import { connectRedisCoordination, type RedisCoordination } from '../src/redis.js';
import { until } from '../src/testing.js';
import { dpopKit } from './fixtures/dpop-tokens.js';
import { connectPeer } from './fixtures/relay-clients.js';

const ISSUER = 'https://issuer.example';
const AUDIENCE = 'wmp-relay-dpop';
const SUB = 'https://wallet.example/alice';
const dpop = dpopKit(ISSUER, AUDIENCE);

let server: RedisServer;
let coordination: RedisCoordination;
let relay: Relay;
let url: string;
let jtis = 0;

beforeAll(async () => {
  server = await startRedis({ name: 'dpop' });
  coordination = await connectRedisCoordination({
    url: server.url,
    nodeId: 'dpop-1',
    prefix: 'dpop:',
    maxReconnectDelayMs: 50,
    commandTimeoutMs: 300,
    pingIntervalMs: 100,
  });
  relay = createRelay({
    coordination,
    authenticators: await relayAuthenticators({
      dpop: { key: await dpop.issuerKey(), issuer: ISSUER, audience: AUDIENCE, schemes: ['uri'] },
    }),
  });
  ({ url } = await relay.listen());
}, 60_000);

afterAll(async () => {
  await relay?.close();
  await coordination?.close();
  server?.destroy();
});

async function openWith(proof: string, token: string): Promise<unknown> {
  try {
    const session = await WmpSession.open(await connectPeer(url, 'ws'), {
      sender: SUB,
      auth: { type: 'dpop', token, proof },
    });
    await session.close();
    return 'ok';
  } catch (e) {
    return { code: (e as { code?: unknown }).code, data: (e as { data?: unknown }).data };
  }
}

describe('DPoP with its jtis in Redis', () => {
  it('takes each proof once, refuses with replay_cache_unavailable while Redis is down, and once again after', async () => {
    const htu = `${url.replace(/^http/, 'ws')}/wmp`;
    const token = dpop.token(SUB);
    const fresh = () => dpop.proof(token, htu, `jti-${++jtis}`);

    const first = fresh();
    expect(await openWith(first, token)).toBe('ok');
    expect(await openWith(first, token)).toEqual({ code: -31002, data: { reason: 'dpop_replay' } });

    // SIGSTOP: Redis holds its keys but answers nothing until SIGCONT (a command times out in 300 ms).
    const pid = server.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      const during = fresh();
      expect(await openWith(during, token)).toEqual({ code: -31007, data: { reason: 'replay_cache_unavailable' } });
      // The relay still serves a sender that needs no replay cache.
      const other = await WmpSession.open(await connectPeer(url, 'ws'), { signer: generateKeypair() });
      await other.close();
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await until('the coordination healthy again', () => coordination.health() === 'ok');
    // Used before the outage: still used. A fresh proof is taken once.
    expect(await openWith(first, token)).toEqual({ code: -31002, data: { reason: 'dpop_replay' } });
    const after = fresh();
    expect(await openWith(after, token)).toBe('ok');
    expect(await openWith(after, token)).toEqual({ code: -31002, data: { reason: 'dpop_replay' } });
  }, 60_000);
});
