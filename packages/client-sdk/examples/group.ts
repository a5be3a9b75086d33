// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { connect, Group, type GroupError, Identity, MemoryClientStore, type WmpClient } from '@wmp/client-sdk/node';
import { startLocalRelays } from './local-relays.js';

// A relay started here for the example (use your relay's URL instead).
const relays = await startLocalRelays(1);
const url = `${relays.origins[0]!.replace(/^http/, 'ws')}/wmp`;

// Three people. Each keeps its identity, client session and group state in a store (a
// FileStore or an IndexedDbStore in a real application).
const person = async (name: string) => {
  const identity = Identity.generate();
  const store = new MemoryClientStore();
  return { name, identity, store, client: await connect(url, { identity, store }) };
};
const alice = await person('alice');
const bob = await person('bob');
const carol = await person('carol');
const nameOf = (did: string | undefined) => [alice, bob, carol].find((p) => p.identity.did === did)?.name;

/** The next message of a group a client hands over, already decrypted. */
const nextMessage = (client: WmpClient, group: string) =>
  new Promise<string>((resolve) => {
    const off = client.on('message', (m) => {
      if (m.group !== group) return;
      off();
      resolve(`${m.body} (from ${nameOf(m.from)})`);
    });
  });

// Bob and Carol publish key packages at the relay: each lets someone add them to one group.
for (const p of [bob, carol]) await Group.publishKeyPackages(p.client, 2, p);

// Alice creates the group session (its participants are fixed now) and the MLS group in it.
// Bob and Carol enter with its id (which Alice tells them) and wait for their Welcome.
const a = await Group.create(alice.client, [bob.identity.did, carol.identity.did], alice);
const b = await Group.join(bob.client, a.id, bob);
const c = await Group.join(carol.client, a.id, carol);
await a.add(bob.identity.did);
await a.add(carol.identity.did);
await Promise.all([b.whenJoined(), c.whenJoined()]);
console.log('epoch:', a.epoch, '| members:', a.members.map(nameOf).join(', '));

// End-to-end encrypted: the relay forwards ciphertext; clients decrypt before the application.
const toBob = nextMessage(bob.client, b.id);
const toCarol = nextMessage(carol.client, c.id);
await a.send('Hello group');
console.log('bob reads:', await toBob);
console.log('carol reads:', await toCarol);

// Alice removes Carol. Carol is told, and cannot read what follows (an error event instead).
const removed = new Promise<number>((resolve) => c.on('removed', (e) => resolve(e.epoch)));
const refused = new Promise<GroupError>((resolve) => c.on('error', (e) => resolve(e.error)));
await a.remove(carol.identity.did);
console.log('carol removed at epoch', await removed);
const bobReads = nextMessage(bob.client, b.id);
await a.send('Just us two', { to: [bob.identity.did, carol.identity.did] });
console.log('bob reads:', await bobReads, '| carol:', (await refused).code);

// Bob restarts: a new client and the group restored from the same store read what he missed.
await b.close();
await bob.client.close();
await a.send('While you were away');
const bobAgain = await connect(url, { identity: bob.identity, store: bob.store });
const missed = nextMessage(bobAgain, a.id);
const b2 = await Group.restore(bobAgain, a.id, bob);
console.log('bob after restart reads:', await missed);

// Both commit at once (fresh keys): if both commits are made in the same epoch, the relay takes
// the first and refuses the other, which is dropped and made again on top of the winner.
await Promise.all([a.update(), b2.update()]);
await Promise.all([a.sync(), b2.sync()]); // read what the relay holds for each
console.log('after two updates: epoch', a.epoch, 'and', b2.epoch);

for (const client of [alice.client, bobAgain, carol.client]) await client.close();
await relays.close();
