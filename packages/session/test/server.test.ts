import { generateKeypair, signChallenge, signMessage } from '@wmp/jcs-signing';
import { ErrorCode } from '@wmp/jsonrpc-envelope';
import { generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { bearerAuthenticator, InMemoryTransport, Peer, WmpSession } from '../src/index.js';
import { codeOf, harness, tick } from './helpers.js';

const v = (extra: Record<string, unknown> = {}) => ({ version: '0.1', ...extra });

describe('session creation and negotiation', () => {
  it('issues its own ses- id, negotiates capabilities and asks for authentication', async () => {
    const h = harness({ capabilities: { messaging: { max_size: 65536 }, flows: { max_concurrent: 4 } } });
    const peer = await h.connect();
    const result = (await peer.request('wmp.session.create', {
      wmp: v({ sender: 'did:key:z6Mkx', session_id: 'ses-chosenbyclient' }),
      capabilities_offered: { messaging: { max_size: 1_000_000 }, flows: { max_concurrent: 10 }, mcp: { tools: true } },
      security: { mode: 'tls' },
    })) as Record<string, any>;
    expect(result.wmp.session_id).toMatch(/^ses-[A-Za-z0-9]{22}$/);
    expect(result.wmp.session_id).not.toBe('ses-chosenbyclient');
    expect(result.capabilities).toEqual({ messaging: { max_size: 65536 }, flows: { max_concurrent: 4 } });
    expect(result.security).toEqual({ mode: 'tls' });
    expect(result.challenge).toMatch(/^ch-/);
    expect(result.auth_required).toBe(true);
    expect(result.resumption_token).toMatch(/^rt-[A-Za-z0-9_-]{32}$/);
  });

  it('selects the highest version <= the offer within the MAJOR, else -31013', async () => {
    const h = harness({ supportedVersions: ['0.1', '0.2'] });
    const peer = await h.connect();
    const create = (version: string) => peer.request('wmp.session.create', { wmp: { version } });
    await expect(create('0.9')).resolves.toMatchObject({ wmp: { version: '0.2' } });
    await expect(create('0.1')).resolves.toMatchObject({ wmp: { version: '0.1' } });
    const e = (await create('99.0').catch((x) => x)) as { code: number; data: unknown };
    expect(e.code).toBe(ErrorCode.VersionNotSupported);
    expect(e.data).toEqual({ supported_versions: ['0.1', '0.2'] });
  });

  it('picks an MLS cipher suite and refuses a mode it does not run', async () => {
    const h = harness({ security: { modes: ['tls', 'mls'], cipherSuites: [1] } });
    const peer = await h.connect();
    await expect(
      peer.request('wmp.session.create', { wmp: v(), security: { mode: 'mls', cipher_suites: [2, 1] } }),
    ).resolves.toMatchObject({
      security: { mode: 'mls', cipher_suite: 1 },
    });
    expect(await codeOf(peer.request('wmp.session.create', { wmp: v(), security: { mode: 'mls-optional' } }))).toBe(
      -31005,
    );
  });
});

describe('authentication (core §4.4)', () => {
  it('authenticates with a signed challenge; a pending session refuses everything else', async () => {
    const h = harness();
    const alice = generateKeypair();
    const peer = await h.connect();
    const created = (await peer.request('wmp.session.create', {
      wmp: v({ sender: alice.did }),
      capabilities_offered: { messaging: {} },
    })) as Record<string, any>;
    const id = created.wmp.session_id as string;
    expect(await codeOf(peer.request('wmp.capability.list', { wmp: v({ session_id: id }) }))).toBe(-31002);
    const timestamp = new Date().toISOString();
    const signature = await signChallenge(
      { challenge: created.challenge, session_id: id, sender: alice.did, timestamp },
      alice,
    );
    const auth = { type: 'signed_challenge', challenge: created.challenge, signature };
    const result = await peer.request('wmp.session.authenticate', {
      wmp: v({ session_id: id, sender: alice.did, timestamp }),
      auth,
    });
    expect(result).toMatchObject({ authenticated: true, participant_id: alice.did, identity: alice.did });
    await expect(peer.request('wmp.capability.list', { wmp: v({ session_id: id }) })).resolves.toMatchObject({
      capabilities: { messaging: {} },
    });
    // The challenge is single use: the same answer again is refused.
    expect(
      await codeOf(
        peer.request('wmp.session.authenticate', { wmp: v({ session_id: id, sender: alice.did, timestamp }), auth }),
      ),
    ).toBe(-31002);
  });

  it('refuses a wrong key, an expired challenge and a stale timestamp', async () => {
    let now = Date.now();
    // The challenge expires before the unauthenticated session does (60 s).
    const h = harness({ now: () => now, challengeTtlSeconds: 20 });
    const alice = generateKeypair();
    const open = async () => {
      const peer = await h.connect();
      const c = (await peer.request('wmp.session.create', { wmp: v({ sender: alice.did }) })) as Record<string, any>;
      return { peer, id: c.wmp.session_id as string, challenge: c.challenge as string };
    };
    const attempt = async (
      s: { peer: any; id: string; challenge: string },
      signer = alice,
      ts = new Date(now).toISOString(),
    ) => {
      const signature = await signChallenge(
        { challenge: s.challenge, session_id: s.id, sender: alice.did, timestamp: ts },
        signer,
      );
      return codeOf(
        s.peer.request('wmp.session.authenticate', {
          wmp: v({ session_id: s.id, sender: alice.did, timestamp: ts }),
          auth: { type: 'signed_challenge', challenge: s.challenge, signature, timestamp: ts },
        }),
      );
    };
    expect(await attempt(await open(), generateKeypair())).toBe(-31002);
    const late = await open();
    now += 21_000;
    expect(await attempt(late)).toBe(-31002);
    const stale = await open();
    expect(await attempt(stale, alice, new Date(now - 31_000).toISOString())).toBe(-31011);
  });

  it('accepts a bearer JWT inline and refuses a token for another audience', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const h = harness({
      authenticators: {
        bearer: bearerAuthenticator({
          key: publicKey,
          issuer: 'https://issuer.example',
          audience: 'https://relay.example',
        }),
      },
    });
    const token = (aud: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer('https://issuer.example')
        .setAudience(aud)
        .setSubject('did:key:z6Mkbob')
        .setExpirationTime('5m')
        .sign(privateKey);
    const peer = await h.connect();
    const ok = (await peer.request('wmp.session.create', {
      wmp: v({ sender: 'did:key:z6Mkbob' }),
      auth: { type: 'bearer', token: await token('https://relay.example') },
    })) as Record<string, any>;
    expect(ok.auth_required).toBeUndefined();
    await expect(
      peer.request('wmp.capability.list', { wmp: v({ session_id: ok.wmp.session_id }) }),
    ).resolves.toBeDefined();
    expect(
      await codeOf(
        peer.request('wmp.session.create', {
          wmp: v(),
          auth: { type: 'bearer', token: await token('https://other.example') },
        }),
      ),
    ).toBe(-31002);
    expect(
      await codeOf(
        peer.request('wmp.session.create', {
          wmp: v({ sender: 'did:key:z6Mkeve' }),
          auth: { type: 'bearer', token: await token('https://relay.example') },
        }),
      ),
    ).toBe(-31002);
  });

  it('authenticates itself when the initiator sends a nonce (mutual)', async () => {
    const relay = generateKeypair();
    const h = harness({ identity: { id: relay.did, signer: relay } });
    const peer = await h.connect();
    const r = (await peer.request('wmp.session.create', { wmp: v(), nonce: 'n-123' })) as Record<string, any>;
    expect(r.auth).toMatchObject({ type: 'signed_challenge', challenge: 'n-123' });
    const { verifyChallenge } = await import('@wmp/jcs-signing');
    await expect(
      verifyChallenge(r.auth.signature, {
        challenge: 'n-123',
        session_id: r.wmp.session_id,
        sender: relay.did,
        timestamp: r.auth.timestamp,
      }),
    ).resolves.toEqual(relay.publicKey);
  });
});

describe('enforcement', () => {
  it('binds a session to its connection and its sender', async () => {
    const h = harness();
    const { session, peer } = await h.open();
    const other = await h.connect();
    // Someone else's session id on another connection is refused, as is a spoofed sender.
    expect(await codeOf(other.request('wmp.capability.list', { wmp: v({ session_id: session.id }) }))).toBe(-31002);
    expect(
      await codeOf(
        peer.request('wmp.capability.list', { wmp: v({ session_id: session.id, sender: 'did:key:z6Mkmallory' }) }),
      ),
    ).toBe(-31002);
    expect(await codeOf(peer.request('wmp.capability.list', { wmp: v({ session_id: 'ses-unknown' }) }))).toBe(-31000);
    expect(await codeOf(peer.request('wmp.capability.list', { wmp: v() }))).toBe(-31002);
    await expect(session.request('wmp.capability.list')).resolves.toBeDefined();
  });

  it('refuses a timestamp outside ±30 s with -31011 and server_time', async () => {
    const h = harness();
    const { session } = await h.open();
    const e = (await session
      .request('wmp.capability.list', { wmp: { timestamp: new Date(Date.now() - 60_000).toISOString() } })
      .catch((x) => x)) as { code: number; data: any };
    expect(e.code).toBe(-31011);
    expect(e.data).toMatchObject({ reason: 'clock_skew', acceptable_window_seconds: 30 });
    expect(typeof e.data.server_time).toBe('string');
  });

  it('refuses a duplicate request id within a session', async () => {
    const h = harness();
    const { session, peer } = await h.open();
    const got: unknown[] = [];
    const t = peer.transport as unknown as { send(m: unknown): Promise<void>; onmessage: (f: string) => void };
    const original = t.onmessage;
    t.onmessage = (f) => {
      got.push(JSON.parse(f));
      original(f);
    };
    const msg = { jsonrpc: '2.0', id: 'same', method: 'wmp.capability.list', params: { wmp: session.metadata() } };
    await t.send(msg);
    await t.send(msg);
    await tick();
    expect(got.map((m: any) => m.error?.code ?? 'ok')).toEqual(['ok', -32600]);
  });

  it('requires a negotiated capability (-31005) and encryption where the mode says so (-31003)', async () => {
    const h = harness({ capabilities: { messaging: {}, relay: { destinations: ['*'] } } });
    const { session } = await h.open({ capabilities: { messaging: {} } });
    const e = (await session.request('wmp.flow.start', { flow_type: 'approval', flow_id: 'f1' }).catch((x) => x)) as {
      code: number;
      data: unknown;
    };
    expect([e.code, e.data]).toEqual([-31005, { capability: 'flows' }]);
    const opt = await h.open({
      capabilities: { messaging: {}, relay: {} },
      security: { mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['relay'] },
      participants: ['did:key:bob'],
    });
    const r = (await opt.session.send(['did:key:carol'], { relay_target: 'dave' }).catch((x) => x)) as {
      code: number;
      data: unknown;
    };
    expect([r.code, r.data]).toEqual([-31003, { capability: 'relay' }]);
    await expect(opt.session.send(['did:key:bob'], 'hi')).resolves.toEqual({});
    const mls = await h.open({ capabilities: { messaging: {} }, security: { mode: 'mls', cipher_suites: [1] } });
    expect(await codeOf(mls.session.send([], 'plaintext'))).toBe(-31003);
    await expect(
      mls.session.request('wmp.message.deliver', { wmp: { encrypted: true, epoch: 0 }, ciphertext: 'AAAA' }),
    ).resolves.toEqual({});
  });

  it('requires valid non-repudiation signatures when configured (-31010)', async () => {
    const h = harness({ requireSignatures: ['wmp.message.deliver'] });
    const { session, keypair, peer } = await h.open();
    expect(await codeOf(session.send([], 'unsigned'))).toBe(-31010);
    const signed = await signMessage(
      {
        jsonrpc: '2.0',
        id: 'm1',
        method: 'wmp.message.deliver',
        params: { wmp: session.metadata(), to: [], body: 'signed' },
      },
      keypair,
    );
    await expect(peer.request('wmp.message.deliver', signed.params as Record<string, unknown>)).resolves.toEqual({});
    const forged = await signMessage(
      {
        jsonrpc: '2.0',
        id: 'm2',
        method: 'wmp.message.deliver',
        params: { wmp: session.metadata(), to: [], body: 'x' },
      },
      generateKeypair(),
    );
    expect(await codeOf(peer.request('wmp.message.deliver', forged.params as Record<string, unknown>))).toBe(-31010);
  });
});

describe('resume and close', () => {
  it('resumes on a new connection with a rotated single-use token', async () => {
    const h = harness();
    const { session, peer } = await h.open();
    const firstToken = session.resumptionToken!;
    await peer.close();
    const next = await h.connect();
    expect(await session.resume(next)).toBe(0);
    expect(session.resumptionToken).not.toBe(firstToken);
    await expect(session.request('wmp.capability.list')).resolves.toBeDefined();
    // The old token was used up: -31000, as for an unknown session (core §4.5.4; -31002 would
    // tell a thief that the session exists).
    const again = await h.connect();
    expect(
      await codeOf(
        again.request('wmp.session.resume', { wmp: v(), session_id: session.id, resumption_token: firstToken }),
      ),
    ).toBe(-31000);
    expect(
      await codeOf(
        again.request('wmp.session.resume', { wmp: v(), session_id: 'ses-none', resumption_token: firstToken }),
      ),
    ).toBe(-31000);
  });

  it('sends on the resumed connection what a listener sends at once, when the answer and a message come in one read', async () => {
    const h = harness();
    const { session, peer } = await h.open();
    await peer.close();
    // A responder of our own on the new connection: it answers the resume and delivers a message
    // in the same turn, as ws hands over the frames of one TCP read.
    const [clientSide, responderSide] = InMemoryTransport.createLinkedPair();
    const heard: Record<string, any>[] = [];
    responderSide.onmessage = (frame) => {
      const message = JSON.parse(String(frame));
      heard.push(message);
      if (message.method !== 'wmp.session.resume') return;
      clientSide.receiveRaw(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { missed_messages: 1 } }));
      clientSide.receiveRaw(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'wmp.message.deliver',
          params: { wmp: v({ session_id: session.id, message_id: 'msg-1' }), body: 'x' },
        }),
      );
    };
    await responderSide.start();
    const next = new Peer(clientSide);
    await next.start();
    const acks: Promise<void>[] = [];
    session.on('message', (m) =>
      acks.push(session.notify('wmp.message.ack', { message_ids: [(m.wmp as { message_id: string }).message_id] })),
    );
    expect(await session.resume(next)).toBe(1);
    await Promise.all(acks);
    await tick();
    expect(heard.map((m) => m.method)).toEqual(['wmp.session.resume', 'wmp.message.ack']);
    expect(heard[1]!.params.message_ids).toEqual(['msg-1']);
  });

  it('refuses to resume an expired session with -31001', async () => {
    let now = Date.now();
    const h = harness({ now: () => now });
    const { session } = await h.open({ ttl: 60 });
    now += 61_000;
    const next = await h.connect();
    expect(await codeOf(session.resume(next))).toBe(-31001);
  });

  it('closes a session: later calls get -31000', async () => {
    const h = harness();
    const { session, peer } = await h.open();
    await session.close();
    await tick();
    expect(await codeOf(peer.request('wmp.capability.list', { wmp: v({ session_id: session.id }) }))).toBe(-31000);
  });

  it('updates capabilities mid-session', async () => {
    const h = harness({ capabilities: { messaging: {}, flows: { max_concurrent: 2 } } });
    const { session } = await h.open({ capabilities: { messaging: {} } });
    await expect(
      session.request('wmp.capability.update', { add: { flows: { max_concurrent: 5 } }, remove: ['messaging'] }),
    ).resolves.toMatchObject({
      capabilities: { flows: { max_concurrent: 2 } },
    });
    expect(await codeOf(session.request('wmp.capability.update', { add: { mcp: {} } }))).toBe(-31005);
  });
});

describe('a session opened by WmpSession', () => {
  it('creates and authenticates in one call', async () => {
    const h = harness();
    const alice = generateKeypair();
    const peer = await h.connect();
    const session = await WmpSession.open(peer, { signer: alice, capabilities: { messaging: {} } });
    expect(session.id).toMatch(/^ses-/);
    expect(session.sender).toBe(alice.did);
    await expect(session.request('wmp.capability.list')).resolves.toMatchObject({ capabilities: { messaging: {} } });
  });
});
