import { randomBytes } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { gate } from '../../../test-support/gate.js';
import type { StateChange } from '../src/node.js';
import { FileStore } from '../src/node.js';
import { clientTestbed, FAST_RECONNECT, waitFor } from './client-testbed.js';

const bed = clientTestbed();

/** Quick retries that never give up: on a busy machine the restart may outlast FAST_RECONNECT's 40. */
const PATIENT = { ...FAST_RECONNECT, maxAttempts: Number.POSITIVE_INFINITY };
/** Waits after the restart include reconnecting and the queue's redelivery. */
const AFTER_RESTART_MS = 30_000;

/** Sends 1..count to `to`, one after the other; `pause` lets the test hold the stream at a point. */
async function stream(
  send: (n: number) => Promise<unknown>,
  count: number,
  progress: { sent: number },
  pauseAt?: Promise<void>,
): Promise<void> {
  for (let n = 1; n <= count; n++) {
    await send(n);
    progress.sent = n;
    if (n === Math.floor(count / 3) && pauseAt) await pauseAt;
  }
}

describe('a relay restarted mid-session (same SQLite file, same port)', () => {
  it('both clients reconnect with backoff and resume; no message is lost or handed over twice', async () => {
    const seed = randomBytes(32);
    let relay = await bed.relay({ sqlite: 'restart.db', seed });
    const port = relay.port;
    const alice = await bed.client(relay.url, { binding: 'ws', reconnect: PATIENT });
    const bob = await bed.client(relay.url, { binding: 'http', reconnect: PATIENT });
    const sessions = [alice.client.sessionId, bob.client.sessionId];
    const states: Record<string, StateChange[]> = { alice: [], bob: [] };
    alice.client.on('state', (s) => {
      states.alice!.push(s);
    });
    bob.client.on('state', (s) => {
      states.bob!.push(s);
    });
    // Senders listen for statuses, as an application does: a `delivered` the relay kept while its
    // sender was reconnecting waits for a `status` listener, unacknowledged, in the relay's queue.
    for (const who of [alice, bob]) who.client.on('status', () => undefined);

    const count = 30;
    const a = { sent: 0 };
    const b = { sent: 0 };
    const { opened: held, open: release } = gate();
    // Two numbered streams, one each way, kept running while the relay goes down and comes back.
    const streams = Promise.all([
      stream((n) => alice.client.send(bob.identity.did, { n }), count, a, held),
      stream((n) => bob.client.send(alice.identity.did, { n }), count, b, held),
    ]);
    await waitFor(() => a.sent >= count / 3 && b.sent >= count / 3, 10_000, 'a third of each stream');
    // Some messages are in flight while the relay stops: a held stream goes on as soon as it closes.
    const closing = relay.close();
    release();
    await closing;
    // Both clients have seen the relay go before it comes back.
    await waitFor(() => states.alice!.some((s) => s.state === 'reconnecting'), 10_000, 'alice reconnecting');
    await waitFor(() => states.bob!.some((s) => s.state === 'reconnecting'), 10_000, 'bob reconnecting');
    relay = await bed.relay({ sqlite: 'restart.db', seed, port });
    await streams;

    const numbers = (inbox: typeof alice.inbox) => inbox.map((m) => (m.body as { n: number }).n);
    const all = Array.from({ length: count }, (_, i) => i + 1);
    await waitFor(
      () => bob.inbox.length >= count && alice.inbox.length >= count,
      AFTER_RESTART_MS,
      'both streams delivered after the restart',
    );
    // A marker each way, sent once every send above was acknowledged: anything sent twice (a send
    // retried after the drop) or replayed comes before it.
    await alice.client.send(bob.identity.did, { n: count + 1 });
    await bob.client.send(alice.identity.did, { n: count + 1 });
    await waitFor(
      () => numbers(bob.inbox).includes(count + 1) && numbers(alice.inbox).includes(count + 1),
      AFTER_RESTART_MS,
      'the markers',
    );
    expect(numbers(bob.inbox)).toEqual([...all, count + 1]);
    expect(numbers(alice.inbox)).toEqual([...all, count + 1]);

    // Both went through reconnecting back to connected, and resumed the same sessions.
    for (const who of ['alice', 'bob'] as const) {
      expect(states[who]!.map((s) => s.state)).toContain('reconnecting');
      expect(states[who]!.at(-1)!.state).toBe('connected');
    }
    expect(states.alice!.find((s) => s.attempt !== undefined)).toMatchObject({ state: 'reconnecting', attempt: 1 });
    expect([alice.client.sessionId, bob.client.sessionId]).toEqual(sessions);
    // Everything was acknowledged: the restarted relay holds nothing.
    const stores = relay.relay.stores;
    await waitFor(async () => (await stores.queue.totals()).count === 0, AFTER_RESTART_MS, 'an empty queue').catch(
      async (e: unknown) => {
        // Says what was never acknowledged (each message's method, status and delivered mark).
        const left: string[] = [];
        for (const q of (await stores.inventory!.queues(undefined, 10)).items)
          for (const m of (await stores.queue.after(q.recipient, 0, 10)).messages) {
            const body = JSON.parse(m.body) as { method?: string; params?: { status?: string } };
            left.push(
              `${q.recipient === alice.identity.did ? 'alice' : q.recipient === bob.identity.did ? 'bob' : q.recipient} #${m.seq} ${body.method} ${body.params?.status ?? ''} delivered=${m.delivered}`,
            );
          }
        throw new Error(`${(e as Error).message}; left: ${left.join(', ')}`);
      },
    );
  }, 90_000);

  it('a new client process resumes the session kept in its store and gets what was sent meanwhile, once', async () => {
    const relay = await bed.relay({ sqlite: 'process.db' });
    const alice = await bed.client(relay.url);
    const storePath = `${bed.dir}/bob-store`;
    const bobStore = new FileStore(storePath);
    const bob = await bed.client(relay.url, { binding: 'http', store: bobStore });
    const bobSession = bob.client.sessionId;
    await alice.client.send(bob.identity.did, { n: 1 });
    await waitFor(() => bob.inbox.length === 1);
    await bob.client.close();

    for (const n of [2, 3]) await alice.client.send(bob.identity.did, { n });
    // "Restart": a new store object on the same files, a new client with the same identity.
    const reopened = new FileStore(storePath);
    const again = await bed.client(relay.url, { binding: 'http', store: reopened, identity: bob.identity });
    await waitFor(() => again.inbox.length === 2);
    // A marker sent now: a second copy of 2 or 3 would have come before it.
    await alice.client.send(bob.identity.did, { n: 4 });
    await waitFor(() => again.inbox.length >= 3);
    expect(again.inbox.map((m) => (m.body as { n: number }).n)).toEqual([2, 3, 4]);
    expect(again.client.sessionId).toBe(bobSession);
  });
});
