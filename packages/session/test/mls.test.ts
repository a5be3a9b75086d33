// MLS wiring of @wmp/session (core §4.2.3, §5.2, §8.4) with real @wmp/mls-bridge groups: the
// responder creates the session's group and the initiator joins by Welcome; content is encrypted
// on the wire, decrypted on receipt, refused when it should have been encrypted, and a relay
// without a group forwards it unread.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeypair } from '@wmp/jcs-signing';
import { MlsError, type WmpError } from '@wmp/jsonrpc-envelope';
import type { MlsGroup } from '@wmp/mls-bridge';
import { attachWebSocketServer, WebSocketClientTransport } from '@wmp/transports/node';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  FlowManager,
  InMemoryTransport,
  negotiateSecurity,
  Peer,
  type SessionErrorEvent,
  type Transport,
  WmpServer,
  type WmpServerOptions,
  WmpSession,
} from '../src/index.js';
import { codeOf } from './helpers.js';
import { framesOf, type Member, member, responderMls, tap } from './mls-fixtures.js';

const MLS = { mode: 'mls' as const, cipher_suites: [1, 2] };

interface Delivered {
  params: Record<string, any>;
  encrypted: boolean | undefined;
}

/** An approval flow whose progress and result carry content. */
function approvalFlows(): FlowManager {
  return new FlowManager({
    types: {
      approval: {
        actions: { awaiting_review: ['approve'] },
        onStart: (params, flow) => flow.progress('awaiting_review', { subject: params.subject }),
        onAction: (_action, params, flow) => flow.complete({ approved: true, note: params.note }),
      },
    },
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A responder that is an MLS member (unless `relay`), recording what its deliver hook gets and
 * every frame both sides receive. `connect()` opens an in-memory connection.
 */
async function setup(options: { relay?: boolean; server?: WmpServerOptions } = {}) {
  const mls = options.relay ? undefined : await responderMls();
  const delivered: Delivered[] = [];
  const server = new WmpServer({
    capabilities: { messaging: {}, flows: { max_concurrent: 4 }, relay: { destinations: ['*'] } },
    flows: approvalFlows(),
    ...(mls ? { mls } : {}),
    hooks: {
      deliver: (params, ctx) => {
        delivered.push({ params: params as Record<string, any>, encrypted: ctx.encrypted });
      },
    },
    ...options.server,
  });
  cleanups.push(() => server.close());
  const serverFrames: string[] = [];
  const clientFrames: string[] = [];
  const connect = async (): Promise<Peer> => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(tap(serverSide, serverFrames));
    const peer = new Peer(tap(clientSide, clientFrames));
    await peer.start();
    return peer;
  };
  return { server, mls, delivered, serverFrames, clientFrames, connect };
}

/** Opens an MLS session as `who`, joining the responder's group by Welcome. */
async function openMls(
  peer: Peer,
  who: Member,
  extra: Partial<Parameters<typeof WmpSession.open>[1]> = {},
): Promise<WmpSession> {
  return WmpSession.open(peer, {
    signer: who.keypair,
    capabilities: { messaging: {}, flows: {}, relay: {} },
    security: MLS,
    mls: await who.join(),
    ...extra,
  });
}

function nextEvent<K extends 'message' | 'error' | 'notification'>(session: WmpSession, event: K) {
  return new Promise<Parameters<Parameters<typeof session.on<K>>[1]>[0]>((resolve) => {
    const off = session.on(event, (e) => {
      off();
      resolve(e);
    });
  });
}

async function errorOf(p: Promise<unknown>): Promise<{ code: number; data: unknown }> {
  const e = (await p.then(
    () => ({ code: 0, data: 'resolved' }),
    (x: unknown) => x,
  )) as WmpError;
  return { code: e.code, data: e.data };
}

describe('security negotiation (core §4.2.3)', () => {
  const policy = { modes: ['tls', 'mls', 'mls-optional'] as const, cipherSuites: [1, 2] };

  it('picks our preferred common suite, keeps mls-optional lists, and refuses no common suite with -31004', async () => {
    expect(negotiateSecurity({ mode: 'mls', cipher_suites: [2, 1] }, policy)).toEqual({ mode: 'mls', cipher_suite: 1 });
    expect(negotiateSecurity({ mode: 'mls', cipher_suites: [2] }, policy)).toEqual({ mode: 'mls', cipher_suite: 2 });
    // No list offers the suite everyone must support; `mls` needs no list of encrypted capabilities.
    expect(negotiateSecurity({ mode: 'mls', encrypted_capabilities: ['relay'] }, policy)).toEqual({
      mode: 'mls',
      cipher_suite: 1,
    });
    expect(
      negotiateSecurity({ mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['messaging'] }, policy),
    ).toEqual({ mode: 'mls-optional', cipher_suite: 1, encrypted_capabilities: ['messaging'] });
    expect(negotiateSecurity({ mode: 'tls', cipher_suites: [1] }, policy)).toEqual({ mode: 'tls' });
    let refused: unknown;
    try {
      negotiateSecurity({ mode: 'mls', cipher_suites: [3, 7] }, policy);
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(MlsError);
    expect((refused as WmpError).data).toEqual({ reason: 'no_common_cipher_suite', supported_cipher_suites: [1, 2] });

    const { connect } = await setup();
    const peer = await connect();
    expect(
      await errorOf(
        peer.request('wmp.session.create', { wmp: { version: '0.1' }, security: { mode: 'mls', cipher_suites: [7] } }),
      ),
    ).toEqual({ code: -31004, data: { reason: 'no_common_cipher_suite', supported_cipher_suites: [1, 2] } });
  });

  it('creates the group, adds the initiator by its key package and returns GroupInfo and Welcome', async () => {
    const { connect, mls } = await setup();
    const alice = await member();
    const session = await openMls(await connect(), alice);
    expect(session.security).toMatchObject({ mode: 'mls', cipher_suite: 1 });
    expect(session.security?.mls_group_info).toMatch(/^[A-Za-z0-9_-]+$/);
    const group = session.cipher as MlsGroup;
    expect(group.members.sort()).toEqual([alice.keypair.did, mls!.member.keypair.did].sort());
    expect(group.epoch).toBe(mls!.groups.get(session.id)!.epoch);
    // Session management stays in the clear and works as before.
    expect(await session.request('wmp.capability.list')).toMatchObject({ security: { mode: 'mls' } });

    // A key package of another identity than the one claimed is refused.
    const mallory = await member();
    const err = await errorOf(
      WmpSession.open(await connect(), { signer: alice.keypair, security: MLS, mls: await mallory.join() }),
    );
    expect(err).toEqual({ code: -31004, data: { reason: 'credential_mismatch' } });
  });

  it('upgrades a tls session to mls with wmp.capability.update and joins the new group', async () => {
    const { connect, delivered } = await setup();
    const alice = await member();
    const bob = generateKeypair().did;
    const session = await WmpSession.open(await connect(), {
      signer: alice.keypair,
      capabilities: { messaging: {} },
      participants: [bob],
    });
    await session.send([bob], 'clear before');
    await session.updateCapabilities({ security: { mode: 'mls', cipher_suites: [1] }, mls: await alice.join() });
    expect(session.security).toMatchObject({ mode: 'mls', cipher_suite: 1 });
    expect(session.cipher).toBeDefined();
    await session.send([bob], 'sealed after');
    expect(delivered.map((d) => [d.params.body, d.encrypted])).toEqual([
      ['clear before', undefined],
      ['sealed after', true],
    ]);
  });
});

describe('mls mode over an in-memory connection', () => {
  it('encrypts deliveries both ways on the wire and decrypts them on receipt', async () => {
    const { connect, mls, server, delivered, serverFrames, clientFrames } = await setup();
    const alice = await member();
    const bob = generateKeypair().did;
    const session = await openMls(await connect(), alice, { participants: [bob] });

    await session.send([bob], { note: 'SECRET-BODY-1' }, 'application/json');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.encrypted).toBe(true);
    expect(delivered[0]!.params).toMatchObject({
      wmp: { sender: alice.keypair.did, encrypted: true, epoch: session.cipher!.epoch },
      to: [bob],
      content_type: 'application/json',
      body: { note: 'SECRET-BODY-1' },
    });
    const [wire] = framesOf(serverFrames, 'wmp.message.deliver');
    expect(Object.keys(wire!.params).sort()).toEqual(['ciphertext', 'to', 'wmp']);
    expect(wire!.params.wmp).toMatchObject({ session_id: session.id, encrypted: true, epoch: session.cipher!.epoch });
    expect(wire!.params.ciphertext).toMatch(/^[A-Za-z0-9_-]+$/); // base64url without padding
    expect(serverFrames.join('\n')).not.toContain('SECRET-BODY-1');

    // The responder's own messages to the session are encrypted by its group member.
    const received = nextEvent(session, 'message');
    await server.notifySession(session.id, 'wmp.message.deliver', {
      to: [alice.keypair.did],
      content_type: 'text/plain',
      body: 'SECRET-REPLY',
    });
    expect(await received).toMatchObject({
      wmp: { sender: mls!.member.keypair.did, encrypted: true },
      body: 'SECRET-REPLY',
    });
    expect(framesOf(clientFrames, 'wmp.message.deliver')[0]!.params.ciphertext).toBeTypeOf('string');
    expect(clientFrames.join('\n')).not.toContain('SECRET-REPLY');
    // Control traffic is never encrypted.
    for (const frame of [...serverFrames, ...clientFrames].map((f) => JSON.parse(f))) {
      if (frame.method && frame.method !== 'wmp.message.deliver') expect(frame.params.ciphertext).toBeUndefined();
    }
  });

  it('encrypts flow content: start and action from the initiator, progress and completion from the responder', async () => {
    const { connect, serverFrames, clientFrames } = await setup();
    const alice = await member();
    const session = await openMls(await connect(), alice);
    const steps: unknown[] = [];
    const { flowId, done } = await session.startFlow(
      'approval',
      { subject: 'SECRET-SUBJECT' },
      { onProgress: (step, payload) => steps.push([step, payload]) },
    );
    await session.request('wmp.flow.action', { flow_id: flowId, action: 'approve', params: { note: 'SECRET-NOTE' } });
    expect(await done).toEqual({ approved: true, note: 'SECRET-NOTE' });
    expect(steps).toEqual([['awaiting_review', { subject: 'SECRET-SUBJECT' }]]);
    for (const method of ['wmp.flow.start', 'wmp.flow.action']) {
      expect(framesOf(serverFrames, method).map((m) => Object.keys(m.params).sort())).toEqual([['ciphertext', 'wmp']]);
    }
    for (const method of ['wmp.flow.progress', 'wmp.flow.complete']) {
      expect(framesOf(clientFrames, method).map((m) => m.params.wmp.encrypted)).toEqual([true]);
    }
    const wire = [...serverFrames, ...clientFrames].join('\n');
    expect(wire).not.toContain('SECRET');
  });

  it('refuses unencrypted content with -31003, in both directions, and encrypted control messages', async () => {
    const { connect, server, delivered } = await setup();
    const alice = await member();
    const bob = generateKeypair().did;
    const peer = await connect();
    const session = await openMls(peer, alice, { participants: [bob] });
    const wmp = session.metadata();

    // The responder refuses clear content in an mls session.
    expect(await errorOf(peer.request('wmp.message.deliver', { wmp, to: [bob], body: 'clear' }))).toEqual({
      code: -31003,
      data: { capability: 'messaging' },
    });
    expect(
      await errorOf(peer.request('wmp.flow.start', { wmp, flow_type: 'approval', flow_id: 'f-clear', params: {} })),
    ).toEqual({ code: -31003, data: { capability: 'flows' } });
    // Control messages are never encrypted.
    expect(
      await codeOf(
        peer.request('wmp.capability.list', { wmp: { ...wmp, encrypted: true, epoch: 1 }, ciphertext: 'AAAA' }),
      ),
    ).toBe(-32602);
    // Without a cipher the initiator refuses to send in the clear: nothing leaves.
    const cipher = session.cipher;
    session.useCipher(undefined);
    expect(await errorOf(session.send([bob], 'clear'))).toEqual({ code: -31003, data: { capability: 'messaging' } });
    session.useCipher(cipher);
    expect(delivered).toEqual([]);

    // The initiator refuses clear content from the responder too, and tells its listener.
    const messages: unknown[] = [];
    session.on('message', (m) => messages.push(m));
    const refused = nextEvent(session, 'error');
    const connection = server.connectionsOf(session.id)[0]!;
    expect(
      await errorOf(
        connection.peer.request('wmp.message.deliver', {
          wmp: { version: '0.1', session_id: session.id },
          body: 'clear',
        }),
      ),
    ).toEqual({ code: -31003, data: { capability: 'messaging' } });
    const event = (await refused) as SessionErrorEvent;
    expect([event.method, event.error.code]).toEqual(['wmp.message.deliver', -31003]);
    expect(messages).toEqual([]);
  });

  it('answers garbage, tampered and unknown-epoch ciphertext with -31004 and stays usable', async () => {
    const { connect, mls, delivered } = await setup();
    const alice = await member();
    const bob = generateKeypair().did;
    const peer = await connect();
    const session = await openMls(peer, alice, { participants: [bob] });
    const group = session.cipher as MlsGroup;
    const wmp = session.metadata({ encrypted: true, epoch: group.epoch });

    expect(await errorOf(peer.request('wmp.message.deliver', { wmp, ciphertext: 'AAAA' }))).toEqual({
      code: -31004,
      data: { reason: 'malformed' },
    });
    const real = await group.encryptParams({ wmp: session.metadata(), to: [bob], body: 'x' });
    const text = real.ciphertext as string;
    const tampered = text.slice(0, -6) + (text.at(-6) === 'A' ? 'B' : 'A') + text.slice(-5);
    expect((await errorOf(peer.request('wmp.message.deliver', { ...real, ciphertext: tampered }))).code).toBe(-31004);
    // A clear routing copy that differs from the encrypted one is refused.
    const sealed = await group.encryptParams({ wmp: session.metadata(), to: [bob], body: 'y' });
    expect(await errorOf(peer.request('wmp.message.deliver', { ...sealed, to: [generateKeypair().did] }))).toEqual({
      code: -31004,
      data: { reason: 'routing_mismatch' },
    });

    // We move to a new epoch the responder has not seen: -31004 unknown_epoch until it has.
    const update = await group.update();
    await group.confirmCommit();
    expect(await errorOf(session.send([bob], 'too early'))).toEqual({
      code: -31004,
      data: { reason: 'unknown_epoch' },
    });
    await mls!.groups.get(session.id)!.process(update.commit);
    await session.send([bob], 'after the commit');
    expect(delivered.map((d) => d.params.body)).toEqual(['after the commit']);
    expect(await session.request('wmp.capability.list')).toMatchObject({ wmp: { session_id: session.id } });
  });

  it('refuses a message whose MLS sender is not its wmp.sender, on either side', async () => {
    const { connect, mls, server } = await setup();
    const alice = await member();
    const peer = await connect();
    const session = await openMls(peer, alice);
    const responderGroup = mls!.groups.get(session.id)!;

    // Initiator side: the responder's member signs, but the message claims someone else.
    const sealed = await responderGroup.encryptParams({
      wmp: { version: '0.1', session_id: session.id, sender: mls!.member.keypair.did },
      body: 'forged',
    });
    const refused = nextEvent(session, 'error');
    const connection = server.connectionsOf(session.id)[0]!;
    expect(
      await errorOf(
        connection.peer.request('wmp.message.deliver', {
          ...sealed,
          wmp: { ...(sealed.wmp as object), sender: generateKeypair().did },
        }),
      ),
    ).toEqual({ code: -31004, data: { reason: 'sender_mismatch' } });
    expect(((await refused) as SessionErrorEvent).error.data).toEqual({ reason: 'sender_mismatch' });

    // Responder side: Bob, another member, encrypts; Alice replays it as her own message.
    const bob = await member();
    const add = await responderGroup.add((await bob.client.createKeyPackage()).keyPackage);
    await responderGroup.confirmCommit();
    await (session.cipher as MlsGroup).process(add.commit);
    const { MlsGroup } = await import('@wmp/mls-bridge');
    const bobGroup = await MlsGroup.join(bob.client, add.welcome!);
    const bobs = await bobGroup.encryptParams({ wmp: session.metadata(), body: 'bob wrote this' });
    expect(await errorOf(peer.request('wmp.message.deliver', bobs))).toEqual({
      code: -31004,
      data: { reason: 'sender_mismatch' },
    });
    // Alice's own messages still go through.
    await expect(session.send([], 'mine')).resolves.toEqual({});
  });
});

describe('mls-optional', () => {
  it('encrypts only messages of the listed capabilities', async () => {
    const { connect, delivered, serverFrames } = await setup();
    const alice = await member();
    const bob = generateKeypair().did;
    const carol = generateKeypair().did;
    const session = await openMls(await connect(), alice, {
      participants: [bob],
      security: { mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['relay'] },
    });
    expect(session.security).toMatchObject({ mode: 'mls-optional', encrypted_capabilities: ['relay'] });

    await session.send([bob], 'CLEAR-TO-PARTICIPANT'); // messaging: TLS only
    await session.send([carol], 'SEALED-TO-THIRD-PARTY'); // relay: encrypted
    const { done, flowId } = await session.startFlow('approval', { subject: 'CLEAR-FLOW' });
    await session.request('wmp.flow.action', { flow_id: flowId, action: 'approve' });
    await done;

    expect(delivered.map((d) => [d.params.body, d.encrypted])).toEqual([
      ['CLEAR-TO-PARTICIPANT', undefined],
      ['SEALED-TO-THIRD-PARTY', true],
    ]);
    const wire = serverFrames.join('\n');
    expect(wire).toContain('CLEAR-TO-PARTICIPANT');
    expect(wire).toContain('CLEAR-FLOW');
    expect(wire).not.toContain('SEALED-TO-THIRD-PARTY');
    // The responder refuses a clear message of a listed capability (the error-encryption-required vector).
    expect(
      await errorOf(session.peer.request('wmp.message.deliver', { wmp: session.metadata(), to: [carol], body: 'x' })),
    ).toEqual({ code: -31003, data: { capability: 'relay' } });
  });
  it('holds the responder to the same list: listed messaging is encrypted both ways, unlisted flows are not', async () => {
    const { connect, server, clientFrames } = await setup();
    const alice = await member();
    const session = await openMls(await connect(), alice, {
      security: { mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['messaging'] },
    });
    const received = nextEvent(session, 'message');
    await server.notifySession(session.id, 'wmp.message.deliver', { body: 'SEALED-FROM-RESPONDER' });
    expect(await received).toMatchObject({ wmp: { encrypted: true }, body: 'SEALED-FROM-RESPONDER' });
    const { done, flowId } = await session.startFlow('approval', { subject: 'CLEAR-PROGRESS' });
    await session.request('wmp.flow.action', { flow_id: flowId, action: 'approve' });
    await done;
    const wire = clientFrames.join('\n');
    expect(wire).not.toContain('SEALED-FROM-RESPONDER');
    expect(wire).toContain('CLEAR-PROGRESS');
  });
});

describe('a relay without a group', () => {
  it('forwards encrypted deliveries unread between two members of a group of their own', async () => {
    const sessions = new Map<string, string>(); // identity -> its session with the relay
    let forge: string | undefined;
    const relay = await setup({ relay: true });
    const forwardTo = relay.server;
    const seen: Delivered[] = [];
    relay.server.handle('wmp.message.deliver', async (raw, ctx) => {
      const { wmp, ...content } = raw as { wmp: Record<string, unknown>; to: string[] };
      seen.push({ params: raw as Record<string, any>, encrypted: ctx.encrypted });
      for (const to of content.to) {
        const target = sessions.get(to)!;
        await forwardTo.notifySession(target, 'wmp.message.deliver', {
          ...content,
          wmp: { ...wmp, session_id: target, sender: forge ?? ctx.sender },
        });
      }
      return {};
    });
    const alice = await member();
    const bob = await member();
    const open = async (who: Member) => {
      const s = await WmpSession.open(await relay.connect(), {
        signer: who.keypair,
        capabilities: { messaging: {}, relay: {} },
        security: MLS,
      });
      sessions.set(who.keypair.did, s.id);
      return s;
    };
    const aliceSession = await open(alice);
    const bobSession = await open(bob);
    // The relay negotiated mls but holds no group: it returns no GroupInfo and no Welcome.
    expect(aliceSession.security).toEqual({ mode: 'mls', cipher_suite: 1 });
    expect(aliceSession.cipher).toBeUndefined();

    // Alice and Bob make their group themselves (as through wmp.mls.group.* and key packages).
    const { MlsGroup } = await import('@wmp/mls-bridge');
    const aliceGroup = await MlsGroup.create(alice.client);
    const add = await aliceGroup.add((await bob.client.createKeyPackage()).keyPackage);
    await aliceGroup.confirmCommit();
    aliceSession.useCipher(aliceGroup);
    bobSession.useCipher(await MlsGroup.join(bob.client, add.welcome!));

    const received = nextEvent(bobSession, 'message');
    await aliceSession.send([bob.keypair.did], 'SECRET-THROUGH-THE-RELAY');
    expect(await received).toMatchObject({
      wmp: { sender: alice.keypair.did, encrypted: true },
      to: [bob.keypair.did],
      body: 'SECRET-THROUGH-THE-RELAY',
    });
    expect(seen[0]!.encrypted).toBe(true);
    expect(Object.keys(seen[0]!.params).sort()).toEqual(['ciphertext', 'to', 'wmp']);
    expect([...relay.serverFrames, ...relay.clientFrames].join('\n')).not.toContain('SECRET');

    // A relay rewriting the sender is caught by the recipient: the MLS sender is Alice.
    forge = generateKeypair().did;
    const refused = nextEvent(bobSession, 'error');
    await aliceSession.send([bob.keypair.did], 'forwarded under a forged sender');
    expect(((await refused) as SessionErrorEvent).error.data).toEqual({ reason: 'sender_mismatch' });
    // A relay cannot run encrypted content it would have to read.
    expect(
      await errorOf(
        aliceSession.peer.request('wmp.resolve', {
          wmp: aliceSession.metadata({ encrypted: true, epoch: 1 }),
          ciphertext: 'AAAA',
        }),
      ),
    ).toEqual({ code: -32602, data: { reason: 'wmp.resolve is never encrypted' } });
  });
});

describe('mls mode over a real WebSocket', () => {
  it('negotiates, joins and exchanges deliveries that are ciphertext on the wire', async () => {
    const mls = await responderMls();
    const delivered: Delivered[] = [];
    const server = new WmpServer({
      capabilities: { messaging: {} },
      mls,
      hooks: {
        deliver: (params, ctx) => {
          delivered.push({ params: params as Record<string, any>, encrypted: ctx.encrypted });
        },
      },
    });
    const serverFrames: string[] = [];
    const clientFrames: string[] = [];
    const http: Server = createServer((_req, res) => res.writeHead(404).end());
    const ws = attachWebSocketServer(http, {
      path: '/wmp',
      onTransport: (t: Transport) => void server.connect(tap(t, serverFrames)),
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      await server.close();
      await ws.close();
      await new Promise<void>((r) => http.close(() => r()));
    });
    const { port } = http.address() as AddressInfo;
    const transport = new WebSocketClientTransport({
      url: `ws://127.0.0.1:${port}/wmp`,
      WebSocket: WebSocket as never,
    });
    const peer = new Peer(tap(transport, clientFrames));
    await peer.start();

    const alice = await member();
    const bob = generateKeypair().did;
    const session = await openMls(peer, alice, { participants: [bob], capabilities: { messaging: {} } });
    expect(session.security).toMatchObject({ mode: 'mls', cipher_suite: 1 });
    await session.send([bob], 'SECRET-OVER-WS');
    expect(delivered.map((d) => [d.params.body, d.encrypted])).toEqual([['SECRET-OVER-WS', true]]);

    const received = nextEvent(session, 'message');
    await server.notifySession(session.id, 'wmp.message.deliver', { body: 'SECRET-BACK-OVER-WS' });
    expect(await received).toMatchObject({ body: 'SECRET-BACK-OVER-WS' });

    expect(framesOf(serverFrames, 'wmp.message.deliver')[0]!.params.wmp).toMatchObject({ encrypted: true });
    expect(framesOf(clientFrames, 'wmp.message.deliver')[0]!.params.wmp).toMatchObject({ encrypted: true });
    expect(serverFrames.join('\n')).not.toContain('SECRET');
    expect(clientFrames.join('\n')).not.toContain('SECRET');
    await session.close();
    await peer.close();
  });
});
