// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Identity, MemoryClientStore } from '@wmp/client-sdk';
import { FileStore } from '@wmp/client-sdk/node';

// An identity is an Ed25519 signing key (its did:key is who you are in WMP) and a separate
// X25519 key that sealed mail is encrypted to.
const alice = Identity.generate();
console.log('did:', alice.did.slice(0, 12) + '...');
console.log('signing key:', alice.signingKey.slice(0, 4) + '...', 'enc key:', alice.encKey.slice(0, 4) + '...');

// Keep it in a store. FileStore (Node) writes one file per key, mode 0600, atomically.
const dir = mkdtempSync(join(tmpdir(), 'wmp-example-'));
const store = new FileStore(join(dir, 'alice'));
await alice.save(store);
console.log('stored keys:', (await store.keys('')).join(','));
console.log('file mode:', (statSync(join(dir, 'alice', 'identity')).mode & 0o777).toString(8));

// A restart: the same identity comes back from the store (loadOrCreate makes one the first time).
const again = await Identity.loadOrCreate(new FileStore(join(dir, 'alice')));
console.log('same identity after reload:', again.did === alice.did);

// Export and import, e.g. for a CLI backup: the JSON form holds the secret keys.
const exported = alice.toJSON();
console.log('exported fields:', Object.keys(exported).sort().join(','));
console.log('imported:', Identity.fromJSON(exported).did === alice.did);

// A card says where your mail boxes are and which key to seal to; it is signed by you.
const card = await alice.createCard(['https://relay-a.example', 'https://relay-b.example']);
console.log('card:', card.protocol, card.relays.length, 'relays, key', card.key === alice.signingKey);

// The same interface in memory (tests, throwaway sessions) and in browsers (IndexedDbStore.open(name)).
const memory = new MemoryClientStore();
await memory.set('mailbox/relay/https://relay-a.example', '{"after":0,"ack":[]}');
await memory.set('identity', JSON.stringify(exported));
console.log('keys with a prefix:', (await memory.keys('mailbox/')).join(','));

rmSync(dir, { recursive: true, force: true });
