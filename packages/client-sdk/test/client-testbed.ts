// Shared by the client*.test.ts files: real relays (createRelay, SQLite in a temp dir when asked)
// on real ports, and WmpClients over WebSocket or HTTP + SSE, all closed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from '@wmp/jcs-signing';
import { createRelay, type Relay, type RelayConfig } from '@wmp/relay-server/node';
import { SqliteStore } from '@wmp/relay-server/sqlite';
import { afterAll, afterEach } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { Identity } from '../src/identity/identity.js';
import { connect, type ReceivedMessage, type WmpClient, type WmpClientOptions } from '../src/node.js';

export type Binding = 'ws' | 'http';

/** Quick backoff for tests (the spec's 1 s .. 30 s would make them slow). */
export const FAST_RECONNECT = { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 40 } as const;

export { waitFor };

/** The endpoint URL of a relay for a binding. */
export function endpointOf(url: string, binding: Binding): string {
  return binding === 'ws' ? `${url.replace(/^http/, 'ws')}/wmp` : `${url}/wmp`;
}

export function clientTestbed() {
  const dir = mkdtempSync(join(tmpdir(), 'wmp-client-'));
  const relays = new Set<Relay>();
  const clients = new Set<WmpClient>();
  afterEach(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    clients.clear();
    for (const r of relays) await r.close().catch(() => undefined);
    relays.clear();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  return {
    dir,
    /** A relay; `sqlite` names a database file in the temp dir (the same name = the same data). */
    async relay(options: { sqlite?: string; port?: number; seed?: Uint8Array; config?: RelayConfig } = {}) {
      const path = options.sqlite === undefined ? undefined : join(dir, options.sqlite);
      const relay = createRelay({
        identity: { seed: options.seed ?? randomBytes(32) },
        ...(options.port === undefined ? {} : { port: options.port }),
        ...(path === undefined ? {} : { store: (limits) => SqliteStore.open({ path, ...limits }) }),
        ...options.config,
      });
      const { url, port } = await relay.listen();
      relays.add(relay);
      return {
        relay,
        url,
        port,
        close: async () => {
          relays.delete(relay);
          await relay.close();
        },
      };
    },
    /** A connected client (`binding` picks the URL form; a bare origin goes through discovery). */
    async client(
      url: string,
      options: Partial<WmpClientOptions> & { binding?: Binding | 'discover' } = {},
    ): Promise<{ client: WmpClient; identity: Identity; inbox: ReceivedMessage[] }> {
      const identity = (options.identity as Identity | undefined) ?? Identity.generate();
      const target = options.binding === 'discover' ? url : endpointOf(url, options.binding ?? 'ws');
      const client = await connect(target, { reconnect: FAST_RECONNECT, ...options, identity });
      clients.add(client);
      const inbox: ReceivedMessage[] = [];
      client.on('message', (m) => {
        inbox.push(m);
      });
      return { client, identity, inbox };
    },
    track(client: WmpClient): WmpClient {
      clients.add(client);
      return client;
    },
  };
}
