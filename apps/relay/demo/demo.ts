// The browser demo's page script (wmp-relay --demo serves it at /demo/): two identities, a live
// WMP session each over the browser's WebSocket, and sealed OHAN mail in the relay's box, all with
// the SDK's browser entry against the relay that served the page.
import { Identity, Mailbox, type MailMessage, MemoryClientStore, WmpClient } from '@wmp/client-sdk';

interface Person {
  readonly name: 'alice' | 'bob';
  readonly identity: Identity;
  readonly store: MemoryClientStore;
  readonly mailbox: Mailbox;
  client?: WmpClient;
}

const origin = location.origin;
const byId = (id: string) => document.getElementById(id) as HTMLElement;

function person(name: Person['name']): Person {
  const identity = Identity.generate();
  const store = new MemoryClientStore();
  byId(`${name}-did`).textContent = identity.did;
  return { name, identity, store, mailbox: new Mailbox({ identity, store, relays: [origin] }) };
}

const alice = person('alice');
const bob = person('bob');

function log(who: Person, text: string): void {
  const item = document.createElement('li');
  item.textContent = text;
  byId(`${who.name}-log`).append(item);
}

function bodyOf(m: MailMessage): string {
  return String((m.envelope as { params?: { body?: unknown } }).params?.body);
}

/** Runs a button's action, reporting a failure in the page instead of losing it. */
function on(id: string, action: () => Promise<void>): void {
  byId(id).addEventListener('click', () => {
    action().catch((error: unknown) => {
      byId('status').textContent = `failed: ${(error as Error)?.message ?? String(error)}`;
    });
  });
}

on('start', async () => {
  for (const p of [alice, bob]) {
    const client = await WmpClient.connect(origin, { identity: p.identity, store: p.store });
    client.on('message', (m) =>
      log(p, `live from ${m.from === alice.identity.did ? 'Alice' : 'Bob'}: ${String(m.body)}`),
    );
    p.client = client;
    const { outcomes } = await p.mailbox.publishCard([origin]);
    log(p, `card ${outcomes.map((o) => (o.ok ? o.status : o.error.code)).join(', ')}`);
  }
  byId('status').textContent = 'connected';
});

async function sendLive(from: Person, to: Person): Promise<void> {
  const text = (byId(`${from.name}-text`) as HTMLInputElement).value;
  const result = await from.client!.send(to.identity.did, text);
  log(from, `sent live: ${text} (${result.status})`);
}
on('alice-live', () => sendLive(alice, bob));
on('bob-live', () => sendLive(bob, alice));

on('alice-sealed', async () => {
  const card = await alice.mailbox.lookupCard(bob.identity.did, origin);
  if (card === undefined) throw new Error("Bob's card is not published yet");
  const text = `sealed: ${(byId('alice-text') as HTMLInputElement).value}`;
  const sent = await alice.mailbox.send(card, {
    jsonrpc: '2.0',
    id: `demo-${Date.now()}`,
    method: 'wmp.message.deliver',
    params: {
      wmp: { version: '0.1', sender: alice.identity.did, timestamp: new Date().toISOString() },
      to: [bob.identity.did],
      body: text,
    },
  });
  log(
    alice,
    `sealed to Bob's box: ${sent.outcomes.map((o) => (o.ok ? `${o.status}, stamp ${o.stampBits} bits` : o.error.code)).join('; ')}`,
  );
});

on('bob-fetch', async () => {
  const { messages } = await bob.mailbox.fetch();
  if (messages.length === 0) log(bob, 'no sealed mail');
  for (const m of messages) log(bob, `sealed from ${m.from === alice.identity.did ? 'Alice' : m.from}: ${bodyOf(m)}`);
});

byId('status').textContent = 'ready';
