// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair } from '@wmp/jcs-signing';
import { createEvent, generateEncKeypair, verifyEvent } from '@wmp/ohan-seal';
import { RelayQueueFullError } from '@wmp/relay-server';
import { SqliteStore } from '@wmp/relay-server/sqlite';

const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-example-'));
const path = join(dir, 'relay.db');
// By default one sender may hold a quarter of a recipient's queue; here Alice may fill it.
const options = { path, queue: { maxQueued: 2, maxQueuedPerSender: 2 }, box: { directory: false } };
let store = SqliteStore.open(options);

// The WMP offline queue: an append resolves once it is committed, so the relay may acknowledge.
const bob = 'did:key:z6MkBob';
const routed = (id: string) => ({
  id,
  sender: 'did:key:z6MkAlice',
  body: JSON.stringify({ jsonrpc: '2.0', method: 'wmp.message.deliver', params: { body: id } }),
});
const expiresAt = Date.now() + 3600_000;
console.log('append:', JSON.stringify(await store.queue.append(bob, routed('msg-1'), { expiresAt })));
console.log('retry:', JSON.stringify(await store.queue.append(bob, routed('msg-1'), { expiresAt })));
await store.queue.append(bob, routed('msg-2'), { expiresAt });
try {
  await store.queue.append(bob, routed('msg-3'), { expiresAt });
} catch (e) {
  if (e instanceof RelayQueueFullError) console.log('full:', e.code, e.message, e.reason);
}
const page = await store.queue.after(bob, undefined, 10);
console.log('replay:', page.messages.map((m) => `${m.seq}:${m.id}`).join(' '));
console.log('ack:', JSON.stringify(await store.queue.ack(bob, ['msg-1'])));

// The OHAN box: a verified event goes in by the lanes, caps and evictions of docs/ohan-profile.md.
const alice = generateKeypair();
const carol = generateKeypair();
const carolEnc = generateEncKeypair();
const event = await createEvent({
  envelope: { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { body: 'hello' } },
  to: { key: carol.multikey, enc: carolEnc.multikey },
  from: alice,
});
console.log('verified:', verifyEvent(event).ok);
console.log('stranger, no stamp:', JSON.stringify(await store.box.publish(event)));
await store.box.putAllow(carol.multikey, [alice.multikey]);
console.log('contact:', JSON.stringify({ ...(await store.box.publish(event)), id: '...' }));
console.log('again:', (await store.box.publish(event)).status);
const { events, next, more } = await store.box.fetch(carol.multikey, 0, 50);
console.log('fetch:', events.length, 'event(s), seq', events[0]?.seq, 'next', next, 'more', more);

// A restart: everything acknowledged is still there.
await store.close();
store = SqliteStore.open(options);
console.log('after restart:', (await store.queue.after(bob, undefined, 10)).messages.map((m) => m.id).join(' '));
console.log('box totals:', JSON.stringify(await store.box.totals()));
console.log('delivered:', await store.box.delivered(carol.multikey, [event.id]));
await store.close();
rmSync(dir, { recursive: true, force: true });
