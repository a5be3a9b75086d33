// The page script of the browser test, bundled by esbuild for the browser from the SDK's
// browser entry. It exposes the steps the test drives as `window.sdkTest`.
import { cryptoPath } from '@wmp/jcs-signing';
import { Identity, IndexedDbStore, Mailbox, type MailMessage, WmpClient } from '../src/index.js';

const DB_NAME = 'wmp-browser-test';

let store: IndexedDbStore | undefined;
let identity: Identity | undefined;
let mailbox: Mailbox | undefined;
const watched: string[] = [];
const live: unknown[] = [];
let client: WmpClient | undefined;

function ready(): { store: IndexedDbStore; identity: Identity; mailbox: Mailbox } {
  if (!store || !identity || !mailbox) throw new Error('call open() first');
  return { store, identity, mailbox };
}

function bodyOf(m: MailMessage): string {
  return String((m.envelope as { params?: { body?: unknown } }).params?.body);
}

const api = {
  /** The environment the SDK runs in here. */
  info: () => ({
    cryptoPath,
    hasProcess: typeof (globalThis as { process?: unknown }).process !== 'undefined',
    hasIndexedDb: typeof indexedDB !== 'undefined',
  }),

  /** Opens the IndexedDB store and the identity kept there (created on the first visit). */
  async open(relays: string[]) {
    store = await IndexedDbStore.open(DB_NAME);
    identity = await Identity.loadOrCreate(store);
    mailbox = new Mailbox({ identity, store, relays });
    return { did: identity.did, keys: await store.keys('') };
  },

  async publishCard(relays: string[]) {
    const { outcomes } = await ready().mailbox.publishCard(relays);
    return outcomes.map((o) => (o.ok ? o.status : o.error.code));
  },

  async fetchMail() {
    const result = await ready().mailbox.fetch();
    return {
      messages: result.messages.map((m) => ({ body: bodyOf(m), from: m.from, relay: m.relay, eventId: m.eventId })),
      rejected: result.rejected,
      errors: result.errors.map((e) => e.code),
    };
  },

  storeKeys: () => ready().store.keys(''),

  /** Seals a message in the browser (stamp mined with the portable crypto) to `did`'s card. */
  async sendMail(did: string, relay: string, body: string) {
    const { mailbox: mb, identity: me } = ready();
    const card = await mb.lookupCard(did, relay);
    if (!card) throw new Error('no card');
    const sent = await mb.send(card, {
      jsonrpc: '2.0',
      id: `browser-${body}`,
      method: 'wmp.message.deliver',
      params: { wmp: { version: '0.1', sender: me.did, timestamp: new Date().toISOString() }, to: [did], body },
    });
    return sent.outcomes.map((o) => (o.ok ? [o.status, o.stampBits] : [o.error.code]));
  },

  async watch() {
    await ready().mailbox.watch({ onMessage: (m) => void watched.push(bodyOf(m)) });
  },
  watched: () => [...watched],

  /** A live WMP session over the browser's WebSocket. */
  async connect(url: string) {
    client = await WmpClient.connect(url, { identity: ready().identity, store: ready().store });
    client.on('message', (m) => void live.push(m.body));
    return { state: client.state, endpoint: client.endpoint.binding };
  },
  async sendLive(to: string, body: string) {
    if (!client) throw new Error('not connected');
    const result = await client.send(to, body);
    return result.status;
  },
  live: () => [...live],
  async disconnect() {
    await client?.close();
  },
};

(globalThis as { sdkTest?: typeof api }).sdkTest = api;
export type SdkTestApi = typeof api;
