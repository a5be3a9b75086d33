import { generateKeypair, signChallenge } from '@wmp/jcs-signing';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { signedChallengeAuthenticator, verifyResponderAuth, WmpSession, type X509Identity } from '../src/index.js';
import { x5cAuthenticator, x509Identity } from '../src/x509.js';
import { nowRfc3339, refusal } from './auth-helpers.js';
import { harness } from './helpers.js';
import { type HostilePki, makeHostilePki } from './hostile-pki.js';
import { opensslVerify } from './openssl-verify.js';
import { makePki, type TestPki } from './pki.js';

let pki: TestPki;
let hostile: HostilePki;
let relayX509: X509Identity;
beforeAll(async () => {
  pki = await makePki();
  hostile = await makeHostilePki(pki);
  relayX509 = await x509Identity({
    certificatesPem: pki.relayLeaf.pem + pki.intermediate.pem,
    privateKeyPem: pki.relayLeaf.key.pkcs8Pem,
  });
});

const failed = (detail: string) => ({ code: -31002, data: { reason: 'responder_auth_failed', detail } });

describe('mutual authentication (core §4.4.5), initiator side', () => {
  it('verifies a DID responder against the id it expects', async () => {
    const relay = generateKeypair();
    const h = harness({ identity: { id: relay.did, signer: relay } });
    const session = await WmpSession.open(await h.connect(), {
      signer: generateKeypair(),
      verifyResponder: { id: relay.did },
    });
    await expect(session.request('wmp.capability.list')).resolves.toBeDefined();
  });

  it('refuses a responder that signs with another key, or is another responder', async () => {
    const relay = generateKeypair();
    const impostor = generateKeypair();
    // Claims the relay's id but holds another key.
    const h = harness({ identity: { id: relay.did, signer: { ...impostor, kid: `${relay.did}#${relay.multikey}` } } });
    expect(
      await refusal(
        WmpSession.open(await h.connect(), { signer: generateKeypair(), verifyResponder: { id: relay.did } }),
      ),
    ).toEqual(failed('bad_signature'));
    // The initiator closed the session it refused to use.
    await vi.waitFor(async () => expect((await h.server.store.counts()).sessions).toBe(0));
    // A genuine responder, but not the one we expect.
    const other = harness({ identity: { id: impostor.did, signer: impostor } });
    expect(
      await refusal(
        WmpSession.open(await other.connect(), { signer: generateKeypair(), verifyResponder: { id: relay.did } }),
      ),
    ).toEqual(failed('unexpected_responder'));
    // A responder that does not authenticate at all.
    expect(
      await refusal(
        WmpSession.open(await harness().connect(), { signer: generateKeypair(), verifyResponder: { id: relay.did } }),
      ),
    ).toEqual(failed('missing'));
  });

  it('verifies an x5c responder against trust anchors (and its expected name)', async () => {
    const h = harness({ identity: relayX509 });
    const opened = await WmpSession.open(await h.connect(), {
      signer: generateKeypair(),
      verifyResponder: { trustAnchors: pki.root.pem },
    });
    await expect(opened.request('wmp.capability.list')).resolves.toBeDefined();
    await expect(
      WmpSession.open(await h.connect(), {
        signer: generateKeypair(),
        verifyResponder: { id: 'x509:san:dns:relay.example.net', trustAnchors: pki.root.pem },
      }),
    ).resolves.toBeInstanceOf(WmpSession);
    expect(
      await refusal(
        WmpSession.open(await h.connect(), {
          signer: generateKeypair(),
          verifyResponder: { trustAnchors: pki.foreignRoot.pem },
        }),
      ),
    ).toEqual(failed('untrusted_chain'));
    expect(
      await refusal(
        WmpSession.open(await h.connect(), {
          signer: generateKeypair(),
          verifyResponder: { id: 'x509:san:dns:other.example.net', trustAnchors: pki.root.pem },
        }),
      ),
    ).toEqual(failed('unexpected_responder'));
    // Without trust anchors an x5c answer proves nothing.
    expect(
      await refusal(
        WmpSession.open(await h.connect(), {
          signer: generateKeypair(),
          verifyResponder: { id: 'x509:san:dns:relay.example.net' },
        }),
      ),
    ).toEqual(failed('untrusted_chain'));
  });

  it('holds an x5c responder to the RFC 5280 rules for a server (serverAuth), as `openssl verify -purpose sslserver` does', async () => {
    const ours: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    const openssl: Record<string, string> = {};
    const expectedOpenssl: Record<string, string> = {};
    for (const c of hostile.responderCases) {
      const leaf = c.chain[0]!;
      const identity = await x509Identity({
        certificatesPem: c.chain.map((x) => x.pem).join(''),
        privateKeyPem: leaf.key.pkcs8Pem,
      });
      expect(identity.id).toBe(c.sender);
      const h = harness({ identity });
      const r = await refusal(
        WmpSession.open(await h.connect(), {
          signer: generateKeypair(),
          verifyResponder: { id: c.sender, trustAnchors: c.anchors.map((a) => a.pem) },
        }),
      );
      ours[c.name] = r === 'ok' ? 'ok' : r.data;
      // verifyResponderAuth reports the refusal's reason as its detail.
      expected[c.name] = c.expected === 'ok' ? 'ok' : { reason: 'responder_auth_failed', detail: c.expected.reason };
      openssl[c.name] = (await opensslVerify(c.chain, c.anchors, 'sslserver')).ok ? 'accepts' : 'refuses';
      expectedOpenssl[c.name] = (c.expected === 'ok') !== (c.opensslAgrees === false) ? 'accepts' : 'refuses';
    }
    expect(ours).toEqual(expected);
    expect(openssl).toEqual(expectedOpenssl);
  });

  it('refuses an answer to another nonce or session, and a stale one', async () => {
    const relay = generateKeypair();
    const timestamp = nowRfc3339();
    const auth = {
      type: 'signed_challenge',
      challenge: 'n-1',
      timestamp,
      sender: relay.did,
      signature: await signChallenge({ challenge: 'n-1', session_id: 'ses-a', sender: relay.did, timestamp }, relay),
    };
    await expect(verifyResponderAuth(auth, { nonce: 'n-1', sessionId: 'ses-a' }, { id: relay.did })).resolves.toBe(
      relay.did,
    );
    expect(await refusal(verifyResponderAuth(auth, { nonce: 'n-2', sessionId: 'ses-a' }, { id: relay.did }))).toEqual(
      failed('nonce_mismatch'),
    );
    expect(await refusal(verifyResponderAuth(auth, { nonce: 'n-1', sessionId: 'ses-b' }, { id: relay.did }))).toEqual(
      failed('bad_signature'),
    );
    expect(
      await refusal(
        verifyResponderAuth(auth, { nonce: 'n-1', sessionId: 'ses-a', now: Date.now() + 120_000 }, { id: relay.did }),
      ),
    ).toEqual(failed('clock_skew'));
  });
});

describe('x5c initiator and x5c responder in one session', () => {
  it('both sides prove certificates from the same PKI', async () => {
    const wallet = await x509Identity({
      certificatesPem: pki.dnsLeaf.pem + pki.intermediate.pem,
      privateKeyPem: pki.dnsLeaf.key.pkcs8Pem,
    });
    const h = harness({
      identity: relayX509,
      authenticators: {
        x5c: x5cAuthenticator({ trustAnchors: pki.root.pem }),
        signed_challenge: signedChallengeAuthenticator(),
      },
    });
    const session = await WmpSession.open(await h.connect(), {
      x509: wallet,
      verifyResponder: { id: relayX509.id, trustAnchors: pki.root.pem },
    });
    expect(session.sender).toBe('x509:san:dns:wallet.example.com');
    // The responder's auth was x5c over our nonce; a raw create shows its shape.
    const peer = await h.connect();
    const r = (await peer.request('wmp.session.create', {
      wmp: { version: '0.1', sender: wallet.id },
      nonce: 'n-raw',
    })) as {
      auth: Record<string, unknown>;
    };
    expect(r.auth).toMatchObject({ type: 'x5c', challenge: 'n-raw', sender: relayX509.id, x5c: relayX509.x5c });
  });
});
