// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { Identity, Mailbox, type MailMessage, MemoryClientStore } from '@wmp/client-sdk';
import { startLocalRelays } from './local-relays.js';

// Two relays with OHAN boxes, started here for the example (use your relays' origins instead).
const relays = await startLocalRelays(2);
const [relayA, relayB] = relays.origins as [string, string];

// Bob keeps his mail on both relays: his card lists them. Alice publishes hers there too (a
// directory box takes mail only between identities whose cards it holds).
const bob = new Mailbox({ identity: Identity.generate(), store: new MemoryClientStore() });
const alice = new Mailbox({ identity: Identity.generate() });
const published = await bob.publishCard([relayA, relayB]);
console.log('bob card:', published.outcomes.map((o) => (o.ok ? o.status : o.error.code)).join(', '));
await alice.publishCard([relayA, relayB]);

// Alice finds Bob's card on a relay (checked: signed by the key she asked for).
const card = await alice.lookupCard(bob.identity.did, relayA);
if (!card) throw new Error('no card for bob');

// She seals a WMP message to it. It goes to every relay on the card, as one event stamped at
// the relays' stranger bits (8 here; 18 by default).
const message = (body: string, id: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'wmp.message.deliver',
  params: {
    wmp: { version: '0.1', sender: alice.identity.did, timestamp: new Date().toISOString() },
    to: [bob.identity.did],
    content_type: 'text/plain',
    body,
  },
});
const sent = await alice.send(card, message('Lunch on Friday?', 'msg-1'));
for (const o of sent.outcomes) {
  console.log(
    'sent to',
    o.relay === relayA ? 'A:' : 'B:',
    o.ok ? `${o.status}, stamp ${o.stampBits} bits` : o.error.code,
  );
}

// Bob fetches from both relays: verified, opened, handed over once, then acknowledged on both.
// Each message's `envelope` is the JSON-RPC message Alice sealed; `from` is its verified signer.
const bodyOf = (m: MailMessage) =>
  'params' in m.envelope ? (m.envelope.params as { body?: unknown }).body : undefined;
const first = await bob.fetch();
for (const m of first.messages) {
  console.log('bob got:', JSON.stringify(bodyOf(m)), 'from alice:', m.from === alice.identity.did);
}
console.log('rejected:', first.rejected.length, 'errors:', first.errors.length);
console.log('second fetch:', (await bob.fetch()).messages.length, 'messages');

// Contacts skip the stamp: Bob puts Alice on his allow list, and she sends as a contact.
await bob.allow.add([alice.identity.did]);
console.log('allow list has alice:', (await bob.allow.list()).includes(alice.identity.signingKey));

// Watching: a live stream from each relay, resumed from where the last fetch ended.
const live: MailMessage[] = [];
const watch = await bob.watch({ onMessage: (m) => void live.push(m) });
const contact = await alice.send(card, message('See you there', 'msg-2'), { asContact: true });
console.log('contact send stamp bits:', contact.outcomes.map((o) => (o.ok ? o.stampBits : o.error.code)).join(', '));
while (live.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
console.log('watch got:', JSON.stringify(bodyOf(live[0]!)));

await watch.close();
await relays.close();
