// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
// A client of a running OHAN box: registers cards (directory boxes), sets Bob's allow list, has
// Alice publish a sealed event to Bob, then Bob fetches, opens and acknowledges it.
// Usage: BOX_ORIGIN=http://127.0.0.1:8080 tsx --conditions=@wmp/source examples/box-client.ts
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { createCard, createEvent, generateEncKeypair, type OhanEvent, openEvent, signRequest } from '@wmp/ohan-seal';

const origin = process.env.BOX_ORIGIN ?? 'http://127.0.0.1:8080';
const api = `${origin}/ohan/v1`;

/** A signed request: the header covers origin, method, path with query, body hash, nonce and time. */
async function signed(who: Keypair, method: string, path: string, body?: unknown): Promise<Response> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const target = `/ohan/v1${path}`;
  const authorization = await signRequest({ signer: who, origin, method, target, body: text });
  return fetch(origin + target, { method, headers: { authorization }, ...(text === undefined ? {} : { body: text }) });
}

const alice = generateKeypair();
const bob = generateKeypair();
const bobEnc = generateEncKeypair();

const limits = (await (await fetch(`${api}/limits`)).json()) as {
  protocol: string;
  directory: boolean;
  card_stamp_bits?: number;
};
console.log('limits:', limits.protocol, 'directory', limits.directory);
if (limits.directory) {
  for (const [who, enc] of [
    [alice, generateEncKeypair()],
    [bob, bobEnc],
  ] as const) {
    // A key the box does not know stamps its first card (proof of work, like a stranger's event).
    const card = await createCard({
      signer: who,
      enc: enc.multikey,
      relays: [origin],
      stampBits: limits.card_stamp_bits ?? 0,
    });
    const r = await fetch(`${api}/cards`, { method: 'POST', body: JSON.stringify(card) });
    if (r.status !== 201) throw new Error(`card: ${r.status}`);
  }
}

// Bob lets Alice in (contact lane: no stamp needed).
const allow = await signed(bob, 'PUT', '/allow', { contacts: [alice.multikey] });
console.log('allow:', allow.status);

const event = await createEvent({
  envelope: { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { body: 'hello, offline Bob' } },
  to: { key: bob.multikey, enc: bobEnc.multikey },
  from: alice,
});
const published = await fetch(`${api}/events`, { method: 'POST', body: JSON.stringify(event) });
console.log('publish:', published.status, (await published.json()).id === event.id);
const again = await fetch(`${api}/events`, { method: 'POST', body: JSON.stringify(event) });
console.log('publish again:', again.status);

const page = (await (await signed(bob, 'GET', '/events?after=0&limit=100')).json()) as {
  events: (OhanEvent & { seq: number })[];
  next: number;
  more: boolean;
};
console.log('fetch:', page.events.length, 'event(s), next', page.next, 'more', page.more);
const opened = openEvent(page.events[0]!, bobEnc.secretKey);
console.log('opened:', opened.envelope);

const delivered = await signed(bob, 'POST', '/delivered', { ids: page.events.map((e) => e.id) });
console.log('delivered:', JSON.stringify(await delivered.json()));
