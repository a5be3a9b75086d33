// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, Identity, MemoryClientStore, type MessageStatusEvent, type WmpClient } from '@wmp/client-sdk/node';
import { randomBytes } from '@wmp/jcs-signing';
import { createRelay, type RelayConfig } from '@wmp/relay-server/node';
import { SqliteStore } from '@wmp/relay-server/sqlite';

// A relay on this machine that keeps its queue and sessions in SQLite.
const dir = mkdtempSync(join(tmpdir(), 'wmp-live-chat-'));
const config: RelayConfig = {
  identity: { seed: randomBytes(32) },
  store: (limits) => SqliteStore.open({ path: join(dir, 'relay.db'), ...limits }),
};
let relay = createRelay(config);
const { url, port } = await relay.listen();

/** The next message a client hands over (nothing is acknowledged before someone listens). */
const nextMessage = (client: WmpClient) =>
  new Promise<string>((resolve) => {
    const off = client.on('message', (m) => {
      off();
      resolve(`${m.body} (from ${m.from === alice.did ? 'alice' : 'someone else'})`);
    });
  });

// Alice gives the relay's origin: its /.well-known/wmp-configuration says WebSocket. Bob talks
// HTTP + SSE. Both authenticate with their key and register with the relay.
const alice = await connect(url, { identity: Identity.generate(), store: new MemoryClientStore() });
const bob = await connect(`${url}/wmp`, { identity: Identity.generate() });
console.log('alice over', alice.endpoint.binding, '- bob over', bob.endpoint.binding);

const received = nextMessage(bob);
await alice.send(bob.did, 'hello bob');
console.log('bob got:', await received);

// Carol is offline: the relay queues, Alice is told, then told again once Carol has it.
const carol = Identity.generate();
const statuses: MessageStatusEvent[] = [];
alice.on('status', (s) => {
  statuses.push(s);
});
const sent = await alice.send(carol.did, 'hi carol');
const about = () => statuses.filter((s) => s.messageId === sent.messageId).map((s) => s.status);
const carolClient = await connect(url, { identity: carol });
console.log('carol got:', await nextMessage(carolClient));
while (about().length < 2) await new Promise((r) => setTimeout(r, 10));
console.log('alice saw:', about().join(' -> '));

// The relay restarts on the same file and port: the clients reconnect with backoff and resume;
// a send made meanwhile waits for the connection, and nothing arrives twice.
await relay.close();
relay = createRelay({ ...config, port });
await relay.listen();
const afterRestart = nextMessage(bob);
await alice.send(bob.did, 'still there?');
console.log('bob got:', await afterRestart, '- bob is', bob.state);

// A group session: everyone listed may join; a message fans out to the others.
const group = await alice.createGroup([bob.did, carol.did]);
await bob.joinGroup(group.id);
await carolClient.joinGroup(group.id);
const toBob = nextMessage(bob);
const toCarol = nextMessage(carolClient);
await group.send('hello group');
console.log('group of', group.members.length, '- bob:', await toBob, '- carol:', await toCarol);

// Refusals are typed WMP errors.
try {
  await alice.request('wmp.no.such.method');
} catch (e) {
  console.log('unknown method:', (e as { code: number }).code);
}

for (const client of [alice, bob, carolClient]) await client.close();
await relay.close();
rmSync(dir, { recursive: true, force: true });
