// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { cryptoPath, generateKeypair, jcs } from '@wmp/jcs-signing';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import {
  createCard,
  createEvent,
  generateEncKeypair,
  MemoryNonceCache,
  openEvent,
  signRequest,
  verifyCard,
  verifyEvent,
  verifyRequest,
} from '@wmp/ohan-seal';

// Identities: an Ed25519 signing key each (from @wmp/jcs-signing), and for Bob, who receives,
// a separate X25519 key that events are sealed to. Both packages follow the same crypto path.
const alice = generateKeypair();
const bob = generateKeypair();
const bobEnc = generateEncKeypair();
console.log('crypto path:', cryptoPath);

// Bob publishes a signed card: his signing key, his encryption key and the box that holds his queue.
const card = await createCard({ signer: bob, enc: bobEnc.multikey, relays: ['https://box.example'] });
const checked = verifyCard(card);
if (!checked.ok) throw new Error(`card refused: ${checked.reason}`);
console.log('card verified:', checked.card.protocol, 'relays', jcs(checked.card.relays));

// Alice seals a WMP message to the card. A stranger's event needs a stamp (proof of work on the
// id); a box asks for stranger_bits (default 18), 8 keeps this example fast.
const event = await createEvent({
  envelope: {
    jsonrpc: '2.0',
    method: 'wmp.message.deliver',
    params: {
      wmp: { version: '0.1', sender: alice.did, timestamp: new Date().toISOString() },
      to: [bob.did],
      content_type: 'text/plain',
      body: 'Lunch on Friday?',
    },
  },
  to: checked.card,
  from: alice,
  stampBits: 8,
});
for (const [field, value] of Object.entries(event)) {
  const text = typeof value === 'string' ? value : jcs(value);
  console.log(`event.${field}:`, field === 'payload' ? `${text.slice(0, 12)}... (${text.length} chars)` : text);
}

// The box (or anyone) checks an event without any private key: shape, size, id, signature, stamp, times.
console.log('verifyEvent:', JSON.stringify(verifyEvent(event)));

// Only Bob can open it, with the secret half of his card's enc key.
const opened = openEvent(event, bobEnc.secretKey);
console.log('opened:', 'method' in opened.message ? opened.message.method : 'a response');

// Bob fetches his queue with a signed request; the box checks it against what it received.
const target = '/ohan/v1/events?after=0&limit=100';
const authorization = await signRequest({ signer: bob, origin: 'https://box.example', method: 'GET', target });
console.log('Authorization:', authorization.slice(0, 21) + '...');
const nonces = new MemoryNonceCache();
const received = { origin: 'https://box.example', method: 'GET', target, nonces };
const granted = await verifyRequest(authorization, received);
console.log('request:', granted.ok ? `ok, caller is bob: ${granted.key === card.key}` : granted.reason);
const replayed = await verifyRequest(authorization, received);
console.log('same header again:', replayed.ok ? 'ok (unexpected)' : replayed.reason);

// Any change to a signed event is refused: here a later expiry, which changes the id.
const tampered = verifyEvent({ ...event, exp: rfc3339(Date.parse(event.exp) + 86_400_000) });
console.log('tampered:', tampered.ok ? 'ok (unexpected)' : tampered.reason);
