import { verifyRelayChain } from '@wmp/jcs-signing';
import { MethodNotFoundError, WmpError } from '@wmp/jsonrpc-envelope';
import { HttpTransportError, ReconnectPolicy, reconnect } from '@wmp/transports';
import { describe, expect, it } from 'vitest';
import { Identity } from '../src/identity/identity.js';
import {
  ConnectionClosedError,
  connect,
  type MessageStatusEvent,
  ReconnectFailedError,
  type StateChange,
  type UndeliveredMessage,
  WmpClient,
  WmpClientError,
} from '../src/node.js';
import { MemoryClientStore } from '../src/store/memory-store.js';
import { clientTestbed, endpointOf, FAST_RECONNECT, waitFor } from './client-testbed.js';

const bed = clientTestbed();

describe('WmpClient through a relay', () => {
  it('a WebSocket client and an HTTP + SSE client exchange messages, each once', async () => {
    const { url, relay } = await bed.relay();
    // Alice gives the bare origin: the well-known document says WebSocket.
    const alice = await bed.client(url, { binding: 'discover' });
    const bob = await bed.client(url, { binding: 'http' });
    expect(alice.client.endpoint).toMatchObject({ binding: 'websocket', url: endpointOf(url, 'ws') });
    expect(bob.client.endpoint).toMatchObject({ binding: 'http', url: endpointOf(url, 'http') });
    expect(alice.client.state).toBe('connected');
    expect(alice.client.sessionId).toMatch(/^ses-/);

    const sent = await alice.client.send(bob.identity.did, { text: 'hi bob' });
    expect(sent).toMatchObject({ status: 'accepted', messageId: expect.stringMatching(/^msg-/) });
    await waitFor(() => bob.inbox.length === 1);
    const got = bob.inbox[0]!;
    expect(got).toMatchObject({
      via: 'relay',
      id: sent.messageId,
      clientMessageId: sent.clientMessageId,
      from: alice.identity.did,
      body: { text: 'hi bob' },
      contentType: 'application/json',
      sessionId: bob.client.sessionId,
      group: undefined,
    });
    await expect(
      verifyRelayChain(
        { jsonrpc: '2.0', method: 'wmp.message.deliver', params: got.params },
        { lastRelayId: relay.id, allowUnsigned: true },
      ),
    ).resolves.toBe(1);
    // One relay, Bob on his own connection to it: its entry is written unsigned (`when-needed`).
    expect(got.relayChain).toMatchObject({ valid: true, hops: [{ relayId: relay.id, signed: false }] });

    await bob.client.send([alice.identity.did], 'hi alice', { contentType: 'text/plain' });
    await waitFor(() => alice.inbox.length === 1);
    expect(alice.inbox[0]).toMatchObject({ from: bob.identity.did, body: 'hi alice', contentType: 'text/plain' });
    expect(bob.client.lastReceivedId).toBe(sent.messageId);

    // Both acknowledged after handing over: nothing is left queued at the relay.
    await waitFor(async () => (await relay.stores.queue.totals()).count === 0);
    expect(bob.inbox).toHaveLength(1);
    expect(alice.inbox).toHaveLength(1);
  });

  it('the sender sees `queued` then `delivered` for a recipient who is offline', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const statuses: MessageStatusEvent[] = [];
    alice.client.on('status', (s) => {
      statuses.push(s);
    });
    const bobIdentity = Identity.generate();

    const sent = await alice.client.send(bobIdentity.did, { n: 1 });
    await waitFor(() => statuses.length === 1);
    expect(statuses[0]).toMatchObject({ messageId: sent.messageId, status: 'queued', recipient: bobIdentity.did });
    expect(statuses[0]!.queuedUntil).toMatch(/Z$/);

    // Bob comes online: he gets the message, acknowledges it, and Alice is told.
    const bob = await bed.client(url, { binding: 'http', identity: bobIdentity });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({ id: sent.messageId, body: { n: 1 } });
    await waitFor(() => statuses.length === 2);
    expect(statuses.map((s) => s.status)).toEqual(['queued', 'delivered']);
    expect(statuses[1]).toMatchObject({ messageId: sent.messageId, recipient: bobIdentity.did });
  });

  it('a status that came while the sender was away reaches it on its return, once, and is acknowledged', async () => {
    const { url, relay } = await bed.relay();
    const aliceIdentity = Identity.generate();
    const aliceStore = new MemoryClientStore();
    const alice = await bed.client(url, { identity: aliceIdentity, store: aliceStore });
    const bobIdentity = Identity.generate();
    const sent = await alice.client.send(bobIdentity.did, 'while you were out');
    await alice.client.close();

    const bob = await bed.client(url, { binding: 'http', identity: bobIdentity });
    await waitFor(() => bob.inbox.length === 1);
    // The relay keeps Alice's `delivered` in her queue.
    await waitFor(async () => (await relay.stores.queue.stats(aliceIdentity.did)).count === 1);

    const statuses: MessageStatusEvent[] = [];
    const again = bed.track(
      await connect(endpointOf(url, 'ws'), { identity: aliceIdentity, store: aliceStore, reconnect: FAST_RECONNECT }),
    );
    again.on('status', (s) => {
      statuses.push(s);
    });
    await waitFor(() => statuses.length === 1);
    expect(statuses[0]).toMatchObject({ messageId: sent.messageId, status: 'delivered', recipient: bobIdentity.did });
    await waitFor(async () => (await relay.stores.queue.totals()).count === 0);
    expect(statuses).toHaveLength(1);
  });

  it('calls the fallback for a message with no live route, once per recipient, with a self-contained envelope', async () => {
    const { url } = await bed.relay();
    const undelivered: UndeliveredMessage[] = [];
    const alice = await bed.client(url, {
      binding: 'http',
      fallback: (m) => {
        undelivered.push(m);
      },
    });
    const bob = await bed.client(url);
    const carol = Identity.generate();

    const sent = await alice.client.send([bob.identity.did, carol.did], { text: 'anyone?' });
    await waitFor(() => undelivered.length === 1 && bob.inbox.length === 1);
    expect(undelivered[0]).toMatchObject({
      to: carol.did,
      status: 'queued',
      messageId: sent.messageId,
      clientMessageId: sent.clientMessageId,
      body: { text: 'anyone?' },
      envelope: {
        jsonrpc: '2.0',
        method: 'wmp.message.deliver',
        params: {
          wmp: { sender: alice.identity.did, client_message_id: sent.clientMessageId },
          to: [bob.identity.did, carol.did],
        },
      },
    });
    // Per message: `fallback: false` turns it off.
    await alice.client.send(carol.did, 'no fallback', { fallback: false });
    const last = await alice.client.send(carol.did, 'with fallback');
    await waitFor(() => undelivered.length === 2);
    expect(undelivered[1]).toMatchObject({ messageId: last.messageId, to: carol.did });

    // The recipient keeps one copy of what arrives both ways (same sender and client_message_id).
    const carolClient = await bed.client(url, { identity: carol });
    await waitFor(() => carolClient.inbox.length === 3);
    expect(await carolClient.client.receiveMail({ envelope: undelivered[1]!.envelope, from: alice.identity.did })).toBe(
      false,
    );
    const other = {
      ...undelivered[1]!.envelope,
      params: { ...undelivered[1]!.envelope.params, wmp: { client_message_id: 'cmsg-new' } },
    };
    expect(await carolClient.client.receiveMail({ envelope: other, from: alice.identity.did })).toBe(true);
    expect(carolClient.inbox.map((m) => m.via)).toEqual(['relay', 'relay', 'relay', 'mailbox']);
  });

  it('a message sent again with the same clientMessageId (a retry) is handed over once and acknowledged twice', async () => {
    const { url, relay } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url, { binding: 'http' });
    const first = await alice.client.send(bob.identity.did, 'once', { clientMessageId: 'cmsg-retry-1' });
    const second = await alice.client.send(bob.identity.did, 'once', { clientMessageId: 'cmsg-retry-1' });
    expect(second.messageId).not.toBe(first.messageId);
    await alice.client.send(bob.identity.did, 'next');
    await waitFor(() => bob.inbox.length === 2);
    expect(bob.inbox.map((m) => m.body)).toEqual(['once', 'next']);
    await waitFor(async () => (await relay.stores.queue.totals()).count === 0);
  });

  it('a request for an unknown method rejects with the typed -32601 error', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url, { binding: 'http' });
    const error = await alice.client.request('wmp.no.such.method').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MethodNotFoundError);
    expect(error).toBeInstanceOf(WmpError);
    expect(error).toMatchObject({ code: -32601, message: 'Method not found' });
    // The client goes on.
    await expect(alice.client.request('wmp.capability.list')).resolves.toMatchObject({ capabilities: { relay: {} } });
  });

  it('hands messages over only once someone listens, in order, and acknowledges after an async listener', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bobIdentity = Identity.generate();
    for (const n of [1, 2, 3]) await alice.client.send(bobIdentity.did, { n });
    const store = new MemoryClientStore();
    const bob = bed.track(
      await connect(endpointOf(url, 'ws'), { identity: bobIdentity, store, reconnect: FAST_RECONNECT }),
    );
    const got: number[] = [];
    const done: number[] = [];
    bob.on('message', async (m) => {
      got.push((m.body as { n: number }).n);
      await new Promise((r) => setImmediate(r)); // the listener's own work yields to the event loop: under test
      done.push((m.body as { n: number }).n);
    });
    await waitFor(() => done.length === 3);
    expect(got).toEqual([1, 2, 3]);
    expect(done).toEqual([1, 2, 3]);
    // The ids are kept in the store, and the session with its token.
    const keys = await store.keys('client/');
    expect(keys.some((k) => k.endsWith('/session'))).toBe(true);
    expect(keys.some((k) => k.includes('/seen/'))).toBe(true);
  });

  it('calls no listener from inside on(): a one-shot listener that removes itself gets the waiting message', async () => {
    const { url, relay } = await bed.relay();
    const alice = await bed.client(url);
    const bobIdentity = Identity.generate();
    await alice.client.send(bobIdentity.did, 'waiting');
    const bob = bed.track(await connect(endpointOf(url, 'ws'), { identity: bobIdentity, reconnect: FAST_RECONNECT }));
    // The message arrives while nobody listens; `off` is only assigned once on() returns. The
    // relay has written it to Bob's connection (its counter), and an answer Bob gets on that
    // connection afterwards comes after it.
    await waitFor(() => relay.core.metrics.deliveries >= 1);
    await bob.request('wmp.capability.list');
    const errors: unknown[] = [];
    bob.on('error', (e) => {
      errors.push(e);
    });
    const body = await new Promise<unknown>((resolve) => {
      const off = bob.on('message', (m) => {
        off();
        resolve(m.body);
      });
    });
    expect(body).toBe('waiting');
    expect(errors).toEqual([]);
  });

  it('refuses bad URLs and unusable transports with typed errors', async () => {
    const identity = Identity.generate();
    await expect(WmpClient.connect('ftp://example.test/', { identity })).rejects.toMatchObject({
      name: 'WmpClientError',
      code: 'ERR_CLIENT_URL',
    });
    // Node 20 has no global WebSocket: a ws: URL without one cannot be used.
    const hasGlobal = typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function';
    if (!hasGlobal) {
      await expect(WmpClient.connect('ws://127.0.0.1:9/wmp', { identity })).rejects.toBeInstanceOf(WmpClientError);
    }
    // Nothing listens there: the first connection fails (no retry: the caller decides).
    await expect(connect('ws://127.0.0.1:9/wmp', { identity, reconnect: FAST_RECONNECT })).rejects.toMatchObject({
      name: 'WebSocketTransportError',
      code: 'ERR_WS_CONNECT',
    });
    // A relay without a well-known document: the default `/wmp` endpoint.
    const asked: string[] = [];
    const fetch = async (input: string | URL) => {
      asked.push(String(input));
      return new Response('', { status: 404 });
    };
    await expect(
      WmpClient.connect('http://127.0.0.1:9', { identity, transport: 'http', fetch }),
    ).rejects.toBeInstanceOf(HttpTransportError);
    expect(asked).toEqual(['http://127.0.0.1:9/.well-known/wmp-configuration', 'http://127.0.0.1:9/wmp']);
    // A document that is not one is refused.
    const garbage = async () => new Response('not json', { status: 200 });
    await expect(WmpClient.connect('http://127.0.0.1:9/', { identity, fetch: garbage })).rejects.toMatchObject({
      code: 'ERR_CLIENT_DISCOVERY',
    });
  });

  it('starts afresh from unreadable stored state, and bounds the calls waiting for the connection', async () => {
    const relay = await bed.relay();
    const identity = Identity.generate();
    const store = new MemoryClientStore();
    const prefix = `client/${relay.url}/${identity.did}/`;
    await store.set(`${prefix}session`, '{not json');
    await store.set(`${prefix}seen/000000000001`, '[1,2,');
    await store.set(`${prefix}seen/bogus`, '[]');
    const alice = await bed.client(relay.url, {
      identity,
      store,
      maxWaitingCalls: 1,
      reconnect: { initialDelayMs: 5, maxDelayMs: 10, maxAttempts: 1000, jitter: 'none' },
    });
    expect(alice.client.sessionId).toMatch(/^ses-/);
    expect(await store.keys(`${prefix}seen/`)).toEqual([]);
    await waitFor(
      async () => JSON.parse((await store.get(`${prefix}session`)) ?? '{}').session?.id === alice.client.sessionId,
    );

    await relay.close();
    await waitFor(() => alice.client.state === 'reconnecting');
    const first = alice.client.request('wmp.capability.list');
    await expect(alice.client.request('wmp.capability.list')).rejects.toMatchObject({
      name: 'WmpClientError',
      code: 'ERR_CLIENT_TOO_MANY_WAITING',
    });
    await alice.client.close();
    await expect(first).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('gives up after the configured attempts: the client closes and waiting calls reject with ReconnectFailedError', async () => {
    const relay = await bed.relay();
    const alice = await bed.client(relay.url, { reconnect: { initialDelayMs: 5, maxDelayMs: 10, maxAttempts: 3 } });
    const states: StateChange[] = [];
    alice.client.on('state', (s) => {
      states.push(s);
    });
    await relay.close();
    const waiting = alice.client.send(Identity.generate().did, 'never');
    await expect(waiting).rejects.toBeInstanceOf(ReconnectFailedError);
    expect(alice.client.state).toBe('closed');
    expect(states.filter((s) => s.attempt !== undefined).map((s) => s.attempt)).toEqual([1, 2, 3]);
    expect(states.at(-1)).toMatchObject({ state: 'closed', error: expect.any(ReconnectFailedError) });
  });

  it('close() rejects calls waiting for the connection with ConnectionClosedError and stops reconnecting', async () => {
    const relay = await bed.relay();
    let dials = 0;
    const { WebSocket } = await import('ws');
    class CountingWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[], options?: object) {
        super(url, protocols, options);
        dials++;
      }
    }
    const alice = await bed.client(relay.url, {
      WebSocket: CountingWebSocket as never,
      reconnect: { initialDelayMs: 5, maxDelayMs: 10, maxAttempts: 1000, jitter: 'none' },
    });
    const states: StateChange[] = [];
    alice.client.on('state', (s) => {
      states.push(s);
    });
    await relay.close();
    await waitFor(() => dials >= 3);
    expect(alice.client.state).toBe('reconnecting');

    const waiting = alice.client.send(Identity.generate().did, 'waits for the connection');
    const request = alice.client.request('wmp.capability.list');
    await alice.client.close();
    await expect(waiting).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(request).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(alice.client.send('did:key:z6Mkx', 'after close')).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(alice.client.state).toBe('closed');
    expect(states.at(-1)).toMatchObject({ state: 'closed', previous: 'reconnecting' });
    const after = dials;
    // A witness dials the same dead relay on the same backoff: by its fifth failed dial a client
    // still reconnecting would have dialled again as well, however slow the machine.
    let witness = 0;
    const dial = () =>
      new Promise<void>((resolve, reject) => {
        witness++;
        const ws = new WebSocket(endpointOf(relay.url, 'ws'));
        ws.on('open', () => {
          ws.close();
          resolve();
        });
        ws.on('error', reject);
      });
    await expect(
      reconnect(dial, new ReconnectPolicy({ initialDelayMs: 5, maxDelayMs: 10, maxAttempts: 5, jitter: 'none' })),
    ).rejects.toThrow();
    expect(witness).toBe(5);
    expect(dials).toBe(after);
  });
});
