// Real relays for the mailbox tests: createRelay (HTTP + WebSocket on 127.0.0.1, port 0) with the
// OHAN box mounted at /ohan/v1 once the port, and so the public origin, is known (as apps/relay
// does), over the memory stores. Low stranger bits keep stamp mining fast.
import {
  BOX_API_PREFIX,
  type BoxApp,
  type BoxAppOptions,
  createBoxApp,
  createRelay,
  MemoryRelayStores,
  mountBoxApp,
  type Relay,
  type RelayConfig,
  type RelayTlsConfig,
} from '@wmp/relay-server/node';
import { afterEach } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { Identity, Mailbox, type MailboxOptions } from '../src/index.js';

export interface TestRelay {
  readonly origin: string;
  readonly relay: Relay;
  readonly box: BoxApp;
  /** Undelivered events in the box. */
  count(): Promise<number>;
  close(): Promise<void>;
}

export interface TestRelayOptions {
  readonly directory?: boolean;
  readonly strangerBits?: number;
  readonly box?: Partial<Omit<BoxAppOptions, 'store' | 'origin' | 'directory'>>;
  /** Extra routes on the relay's app (added before it serves anything, as Hono requires). */
  readonly routes?: (app: Relay['app']) => void;
  /** Serve HTTPS and WSS with this certificate (and ask for client certificates from `clientCa`). */
  readonly tls?: RelayTlsConfig;
  /** The relay's authenticators (x5c, mtls, ...). */
  readonly authenticators?: RelayConfig['authenticators'];
}

export async function startTestRelay(options: TestRelayOptions = {}): Promise<TestRelay> {
  const directory = options.directory ?? true;
  const relay = createRelay({
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.authenticators ? { authenticators: options.authenticators } : {}),
    store: (limits) =>
      new MemoryRelayStores({
        ...limits,
        box: { directory, strangerBits: options.strangerBits ?? 8, cardStampBits: 8 },
      }),
  });
  let boxFetch: ((request: Request) => Response | Promise<Response>) | undefined;
  relay.app.all(`${BOX_API_PREFIX}/*`, (c) => (boxFetch ? boxFetch(c.req.raw) : c.text('not ready', 503)));
  options.routes?.(relay.app);
  const { url } = await relay.listen();
  const box = createBoxApp({ store: relay.stores.box, origin: url, directory, sweepIntervalMs: 0, ...options.box });
  const mounted = mountBoxApp(box);
  boxFetch = (request) => mounted.fetch(request);
  let closed: Promise<void> | undefined;
  return {
    origin: url,
    relay,
    box,
    count: async () => (await relay.stores.box.totals()).count,
    close() {
      closed ??= (async () => {
        await box.close();
        await relay.close();
      })();
      return closed;
    },
  };
}

/** An identity with its mailbox; `publish` puts its card on its relays. */
export interface TestParty {
  readonly identity: Identity;
  readonly mailbox: Mailbox;
}

/** Relays and parties of one test, all closed after it. */
export function mailboxTestbed() {
  const relays: TestRelay[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    for (const r of relays.splice(0)) await r.close();
  });
  return {
    async relay(options: TestRelayOptions = {}): Promise<TestRelay> {
      const r = await startTestRelay(options);
      relays.push(r);
      return r;
    },
    /** A new identity whose mailbox uses `relays`; its card is published there when `publish` (default true). */
    async party(
      relays: readonly TestRelay[],
      options: Partial<MailboxOptions> & { publish?: boolean } = {},
    ): Promise<TestParty> {
      const identity = options.identity ?? Identity.generate();
      const mailbox = new Mailbox({ identity, ...options });
      if (options.publish ?? true) {
        const { outcomes } = await mailbox.publishCard(relays.map((r) => r.origin));
        if (!outcomes.every((o) => o.ok)) throw new Error('card not published');
      }
      return { identity, mailbox };
    },
    onCleanup(fn: () => Promise<void> | void): void {
      cleanups.push(fn);
    },
  };
}

/** A JSON-RPC `wmp.message.deliver` from `from` to `to`, as an application would send it. */
export function deliver(from: Identity, to: Identity, body: string, id: string | number = `m-${body}`) {
  return {
    jsonrpc: '2.0' as const,
    id,
    method: 'wmp.message.deliver',
    params: {
      wmp: { version: '0.1', sender: from.did, timestamp: new Date().toISOString() },
      to: [to.did],
      content_type: 'text/plain',
      body,
    },
  };
}

export { waitFor };
