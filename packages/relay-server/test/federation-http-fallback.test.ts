// A peer link over HTTP + SSE (docs/federation-profile.md, "Peer sessions": "WebSocket, else
// HTTP+SSE"): relay 2 is reached through a front that passes HTTP (SSE streams included) but no
// WebSocket upgrade, as some proxies do; relay 1's link to it comes up over HTTP + SSE, and
// messages and statuses flow.
import { createServer, request, type Server } from 'node:http';
import { generateKeypair } from '@wmp/jcs-signing';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { federationTestbed } from './fixtures/federation.js';
import { waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();
const fronts: Server[] = [];
afterEach(async () => {
  for (const f of fronts.splice(0)) {
    f.closeAllConnections();
    await new Promise((resolve) => f.close(resolve));
  }
});

/** An HTTP front on `port` for the server on `target`: requests are piped through, upgrades refused. */
async function httpOnlyFront(port: number, target: () => number) {
  const seen = { upgrades: 0, posts: 0, streams: 0 };
  const front = createServer((req, res) => {
    if (req.url?.startsWith('/wmp')) {
      if (req.method === 'POST') seen.posts++;
      else if (req.method === 'GET') seen.streams++;
    }
    const upstream = request(
      { host: '127.0.0.1', port: target(), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  front.on('upgrade', (_req, socket) => {
    seen.upgrades++;
    socket.destroy();
  });
  fronts.push(front);
  await new Promise<void>((resolve) => front.listen(port, '127.0.0.1', resolve));
  return seen;
}

describe('federation: a peer whose WebSocket endpoint cannot be reached', () => {
  it('the link comes up over HTTP + SSE: Bob gets the message, Alice hears delivered once', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const frontUrl = `http://127.0.0.1:${await freePort()}`;
    let relay2Port = 0;
    const seen = await httpOnlyFront(Number(new URL(frontUrl).port), () => relay2Port);
    const [u1, u2] = await bed.setup(2, (i, urls) => {
      relay2Port = Number(new URL(urls[1]!).port);
      return i === 0
        ? {
            identity: { seed: new Uint8Array(32).fill(1) },
            federation: {
              peers: [frontUrl],
              routes: [{ pattern: bob.did, url: frontUrl }],
              timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
            },
          }
        : {
            identity: { seed: new Uint8Array(32).fill(2) },
            // Relay 2's public address is the front: its well-known names the front's endpoints.
            publicUrl: frontUrl,
            federation: { peers: [urls[0]!], routes: [{ pattern: aliceKey.did, url: urls[0]! }] },
          };
    });
    await expect
      .poll(async () => (await (await fetch(`${u1}/metrics`)).text()).match(/^wmp_relay_peer_connected\{.*\} 1$/m))
      .not.toBeNull();
    expect(seen.upgrades).toBeGreaterThan(0);
    expect(seen.streams).toBeGreaterThan(0);

    const alice = await bed.open(u1!, { keypair: aliceKey });
    const b = await bed.open(u2!, { keypair: bob });
    const { message_id } = (await alice.session.send([bob.did], { over: 'sse' })) as { message_id: string };
    await waitFor(() => b.inbox.length === 1, 20_000);
    expect(b.inbox[0]!.wmp.message_id).toBe(message_id);
    expect(b.inbox[0]!.body).toEqual({ over: 'sse' });
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'), 20_000);
    // The status came back on the link's SSE stream, and relay 2 holds nothing else for relay 1.
    await waitFor(async () => (await bed.relays[1]!.stores.queue.totals()).count === 1, 20_000);
    expect(alice.statuses.filter((s) => s.status === 'delivered')).toEqual([expect.objectContaining({ message_id })]);
    expect(seen.posts).toBeGreaterThan(0);
  });
});
