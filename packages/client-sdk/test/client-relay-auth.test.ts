// The relay's own authentication as the SDK checks it (core §4.4.5), and X.509 identities:
// real relays on real ports, the relay's did:key proven by a signature over our nonce.
import { relayAuthenticators } from '@wmp/relay-server/node';
import { beforeAll, describe, expect, it } from 'vitest';
import { makePki, type TestPki } from '../../session/test/pki.js';
import { IdentityError } from '../src/identity/errors.js';
import { Identity } from '../src/identity/identity.js';
import { connect, MemoryClientStore, WmpClientError } from '../src/node.js';
import { clientTestbed, FAST_RECONNECT, waitFor } from './client-testbed.js';

const testbed = clientTestbed();
let pki: TestPki;
beforeAll(async () => {
  pki = await makePki();
}, 60_000);

const walletPem = () => ({
  certificatesPem: pki.dnsLeaf.pem + pki.intermediate.pem,
  privateKeyPem: pki.dnsLeaf.key.pkcs8Pem,
});

describe('mutual authentication of the relay', () => {
  it('checks the relay_id of the well-known document when connecting to a bare origin', async () => {
    const { relay, url } = await testbed.relay();
    const { client } = await testbed.client(url, { binding: 'discover' });
    expect(client.relayId).toBe(relay.id);
  });

  it('refuses a relay that does not prove the expected id (another key), with ERR_CLIENT_RELAY_AUTH', async () => {
    const { url } = await testbed.relay();
    const other = await testbed.relay();
    for (const binding of ['ws', 'http'] as const) {
      const attempt = testbed.client(url, { binding, relay: { id: other.relay.id }, reconnect: false });
      await expect(attempt).rejects.toBeInstanceOf(WmpClientError);
      await expect(attempt).rejects.toMatchObject({
        code: 'ERR_CLIENT_RELAY_AUTH',
        cause: { code: -31002, data: { reason: 'responder_auth_failed', detail: 'unexpected_responder' } },
      });
    }
  });

  it('keeps who the relay proved across a restart that resumes the session; `relay: false` asks nothing', async () => {
    const { relay, url } = await testbed.relay();
    const store = new MemoryClientStore();
    const identity = Identity.generate();
    const first = await connect(url, { identity, store, reconnect: FAST_RECONNECT });
    const sessionId = first.sessionId;
    await first.close();
    const again = testbed.track(await connect(url, { identity, store, reconnect: FAST_RECONNECT }));
    expect(again.sessionId).toBe(sessionId);
    expect(again.relayId).toBe(relay.id);
    const { client: unchecked } = await testbed.client(url, { binding: 'discover', relay: false });
    expect(unchecked.relayId).toBeUndefined();
  });
});

describe('an X.509 identity', () => {
  it('authenticates by x5c as its x509:san:dns id and receives what others send to that id', async () => {
    const { url } = await testbed.relay({
      config: { authenticators: await relayAuthenticators({ trustAnchors: pki.root.pem }) },
    });
    const wallet = await Identity.fromX509(walletPem());
    expect(wallet.id).toBe('x509:san:dns:wallet.example.com');
    const { client, inbox } = await testbed.client(url, { identity: wallet, binding: 'discover' });
    expect(client.id).toBe('x509:san:dns:wallet.example.com');
    expect(client.did).toBe(wallet.did);
    const { client: alice } = await testbed.client(url, { binding: 'http' });
    await alice.send('x509:san:dns:wallet.example.com', { text: 'hello, wallet' });
    await waitFor(() => inbox.length === 1);
    expect(inbox[0]).toMatchObject({ from: alice.did, body: { text: 'hello, wallet' } });
  });

  it('is stored with its chain and key and read back with restore; fromJSON refuses it; bad PEM is an IdentityError', async () => {
    const wallet = await Identity.fromX509(walletPem());
    const json = JSON.parse(JSON.stringify(wallet.toJSON()));
    const back = await Identity.restore(json);
    expect(back.id).toBe(wallet.id);
    expect(back.did).toBe(wallet.did);
    expect(() => Identity.fromJSON(json)).toThrow(expect.objectContaining({ code: 'ERR_IDENTITY_NEEDS_RESTORE' }));
    const store = new MemoryClientStore();
    await wallet.save(store);
    expect((await Identity.load(store))?.id).toBe('x509:san:dns:wallet.example.com');
    await expect(Identity.fromX509({ certificatesPem: 'garbage', privateKeyPem: 'garbage' })).rejects.toBeInstanceOf(
      IdentityError,
    );
    // A key that is not the leaf's.
    await expect(
      Identity.fromX509({ certificatesPem: walletPem().certificatesPem, privateKeyPem: pki.uriLeaf.key.pkcs8Pem }),
    ).rejects.toBeInstanceOf(IdentityError);
  });
});
