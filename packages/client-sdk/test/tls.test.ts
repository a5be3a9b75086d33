// TLS options and failing connections in Node: `nodeFetch` and `connect` / `Mailbox` of
// `@wmp/client-sdk/node` against real servers: one that accepts a connection and closes it (a
// balancer in front of a dead node), one that never answers, HTTPS servers that require a client
// certificate, and relays that serve TLS themselves with a certificate from a private CA.
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { relayAuthenticators } from '@wmp/relay-server/node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { relayServerCertificate } from '../../relay-server/test/fixtures/tls-clients.js';
import { makePki, type TestPki } from '../../session/test/pki.js';
import { Identity } from '../src/identity/identity.js';
import { Mailbox as BrowserSafeMailbox } from '../src/index.js';
import {
  connect,
  Mailbox,
  MemoryClientStore,
  nodeFetch,
  type ReceivedMessage,
  tlsFailureOf,
  WmpClient,
  WmpClientError,
} from '../src/node.js';
import { mailboxTestbed, waitFor } from './mailbox-relays.js';

const bed = mailboxTestbed();
let pki: TestPki;
let serverTls: { cert: string; key: string };
const servers: (Server | HttpsServer)[] = [];
const clients: WmpClient[] = [];
/** Connections the silent server keeps open (closed after each test, so that its server can close). */
const held = new Set<Socket>();

beforeAll(async () => {
  pki = await makePki();
  serverTls = await relayServerCertificate(pki);
}, 60_000);
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of held) s.destroy();
  held.clear();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function listening<T extends Server | HttpsServer>(server: T): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Accepts every connection and closes it at once; `hold` keeps it open and silent instead. */
async function tcpServer(mode: 'close' | 'hold'): Promise<string> {
  const server = createServer((socket) => {
    if (mode === 'close') socket.destroy();
    else held.add(socket);
  });
  return `http://127.0.0.1:${await listening(server)}`;
}

/** An HTTPS server that requires a client certificate from the test PKI and answers 204. */
async function mtlsServer(): Promise<string> {
  const server = createHttpsServer(
    { ...serverTls, ca: pki.root.pem, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.3' },
    (_req, res) => res.writeHead(204).end(),
  );
  return `https://127.0.0.1:${await listening(server)}`;
}

const wallet = () => ({ cert: pki.dnsLeaf.pem + pki.intermediate.pem, key: pki.dnsLeaf.key.pkcs8Pem });

describe('nodeFetch', () => {
  it('rejects at once, ECONNRESET, where a server accepts the connection and closes it', async () => {
    const url = await tcpServer('close');
    const failure = await nodeFetch()(`${url}/.well-known/wmp-configuration`).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as Error).cause).toMatchObject({ code: 'ECONNRESET' });
  });

  it('trusts tls.ca and presents tls.cert to a server that requires a client certificate', async () => {
    const url = await mtlsServer();
    const untrusted = await nodeFetch()(url).catch((e: unknown) => e);
    expect(tlsFailureOf(untrusted)).toEqual({ kind: 'unknown_ca', code: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY' });
    // TLS 1.3 tells a client without a certificate after the handshake, with an alert.
    const noCert = await nodeFetch({ ca: pki.root.pem })(url).catch((e: unknown) => e);
    expect(tlsFailureOf(noCert)).toMatchObject({ kind: 'client_certificate_required' });
    const res = await nodeFetch({ ca: pki.root.pem, ...wallet() })(url, { method: 'POST', body: 'x' });
    expect(res.status).toBe(204);
  });
});

describe('connect of @wmp/client-sdk/node', () => {
  it('rejects at once on a relay that accepts and closes, and in time on one that never answers', async () => {
    const identity = Identity.generate();
    const closing = await tcpServer('close');
    await expect(connect(closing, { identity, reconnect: false })).rejects.toMatchObject({
      code: 'ERR_CLIENT_DISCOVERY',
      cause: { cause: { code: 'ECONNRESET' } },
    });
    const silent = await tcpServer('hold');
    await expect(connect(silent, { identity, reconnect: false, requestTimeoutMs: 300 })).rejects.toMatchObject({
      code: 'ERR_CLIENT_DISCOVERY',
      cause: { code: 'ERR_REQUEST_TIMEOUT' },
    });
  });

  it('reaches a relay with a private CA over WSS and HTTPS + SSE with tls.ca, and says why without it', async () => {
    const relay = await bed.relay({ tls: serverTls });
    expect(relay.origin).toMatch(/^https:/);
    const failure = await connect(relay.origin, { identity: Identity.generate(), reconnect: false }).catch(
      (e: unknown) => e,
    );
    expect(tlsFailureOf(failure)).toMatchObject({ kind: 'unknown_ca' });
    const tls = { ca: pki.root.pem };
    for (const transport of ['websocket', 'http'] as const) {
      const [alice, bob] = [Identity.generate(), Identity.generate()];
      const a = await connect(relay.origin, { identity: alice, tls, transport, reconnect: false });
      const b = await connect(relay.origin, { identity: bob, tls, transport, reconnect: false });
      clients.push(a, b);
      expect(a.endpoint.binding).toBe(transport);
      const inbox: ReceivedMessage[] = [];
      b.on('message', (m) => {
        inbox.push(m);
      });
      await a.send(bob.did, { text: `over ${transport}` });
      await waitFor(() => inbox.length === 1);
      expect(inbox[0]).toMatchObject({ from: alice.did, body: { text: `over ${transport}` } });
    }
  });

  it('x509Auth mtls: the client certificate in the handshake authenticates the X.509 identity', async () => {
    const relay = await bed.relay({
      tls: { ...serverTls, clientCa: pki.root.pem },
      authenticators: await relayAuthenticators({ clientCa: pki.root.pem }),
    });
    const identity = await Identity.fromX509({
      certificatesPem: wallet().cert,
      privateKeyPem: wallet().key,
    });
    for (const transport of ['websocket', 'http'] as const) {
      const options = { identity, transport, reconnect: false as const, store: new MemoryClientStore() };
      // Without the certificate in the handshake there is nothing to authenticate by.
      await expect(
        connect(relay.origin, { ...options, x509Auth: 'mtls', tls: { ca: pki.root.pem } }),
      ).rejects.toMatchObject({ code: -31002 });
      const client = await connect(relay.origin, {
        ...options,
        x509Auth: 'mtls',
        tls: { ca: pki.root.pem, ...wallet() },
      });
      clients.push(client);
      expect(client.id).toBe('x509:san:dns:wallet.example.com');
      expect(client.state).toBe('connected');
    }
  });

  it('refuses tls where it cannot apply: the browser-safe WmpClient.connect, or a fetch of your own', async () => {
    const identity = Identity.generate();
    await expect(WmpClient.connect('https://relay.example', { identity, tls: { ca: 'x' } })).rejects.toMatchObject({
      code: 'ERR_CLIENT_TLS_OPTIONS',
    });
    await expect(
      connect('https://relay.example', { identity, tls: { ca: 'x' }, fetch: () => Promise.reject(new Error()) }),
    ).rejects.toBeInstanceOf(WmpClientError);
  });
});

describe('Mailbox of @wmp/client-sdk/node', () => {
  it('publishes and looks up cards at a box with a private CA; the browser-safe Mailbox refuses tls', async () => {
    const relay = await bed.relay({ tls: serverTls });
    const identity = Identity.generate();
    const untrusting = new Mailbox({ identity });
    const { outcomes, saved } = await untrusting.publishCard([relay.origin]);
    expect(saved).toBe(false);
    expect(outcomes[0]).toMatchObject({ ok: false, error: { code: 'network' } });
    expect(tlsFailureOf(outcomes[0]!.ok ? undefined : outcomes[0]!.error)).toMatchObject({ kind: 'unknown_ca' });

    const mailbox = new Mailbox({ identity, tls: { ca: pki.root.pem } });
    expect(await mailbox.publishCard([relay.origin])).toMatchObject({ saved: true, outcomes: [{ ok: true }] });
    const other = new Mailbox({ identity: Identity.generate(), tls: { ca: pki.root.pem } });
    expect(await other.lookupCard(identity.did, relay.origin)).toMatchObject({ key: identity.signingKey });

    expect(() => new BrowserSafeMailbox({ identity, tls: { ca: pki.root.pem } })).toThrow(
      expect.objectContaining({ code: 'tls_options' }),
    );
    expect(() => new Mailbox({ identity, tls: { ca: pki.root.pem }, fetch: nodeFetch() })).toThrow(
      expect.objectContaining({ code: 'tls_options' }),
    );
  });
});
