import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes, toHex } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import {
  type ClientStore,
  ConnectionClosedError,
  FileStore,
  Group,
  GroupError,
  type GroupErrorEvent,
  type GroupEvents,
  Identity,
  MemoryClientStore,
  type ReceivedMessage,
  type WmpClient,
} from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();

/** One participant: its identity, store, client, group and everything the group told it. */
interface Member {
  readonly name: string;
  readonly identity: Identity;
  readonly store: ClientStore;
  client: WmpClient;
  inbox: ReceivedMessage[];
  group: Group | undefined;
  readonly errors: GroupErrorEvent[];
  readonly removed: GroupEvents['removed'][];
}

/** A store whose group-state writes can be held: a commit of ours then waits before it is sent. */
class GatedStore implements ClientStore {
  readonly #inner = new MemoryClientStore();
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;
  held = 0;

  hold(): void {
    this.#gate = new Promise<void>((resolve) => {
      this.#open = resolve;
    });
  }

  release(): void {
    this.#open?.();
    this.#gate = undefined;
  }

  get(key: string) {
    return this.#inner.get(key);
  }

  async set(key: string, value: string) {
    if (this.#gate && key.startsWith('group/ses-')) {
      this.held++;
      await this.#gate;
    }
    return this.#inner.set(key, value);
  }

  delete(key: string) {
    return this.#inner.delete(key);
  }

  keys(prefix: string) {
    return this.#inner.keys(prefix);
  }
}

async function member(
  name: string,
  url: string,
  binding: 'ws' | 'http',
  store: ClientStore = new MemoryClientStore(),
  identity = Identity.generate(),
): Promise<Member> {
  const { client, inbox } = await bed.client(url, { binding, identity, store });
  return { name, identity, store, client, inbox, group: undefined, errors: [], removed: [] };
}

function watch(m: Member, group: Group): Group {
  m.group = group;
  group.on('error', (e) => {
    m.errors.push(e);
  });
  group.on('removed', (e) => {
    m.removed.push(e);
  });
  return group;
}

const opts = (m: Member) => ({ identity: m.identity, store: m.store });
const bodies = (m: Member) => m.inbox.map((r) => r.body);

/** `from` sends `body` to the group; each of `to` reads it, decrypted, from `from`, in `from`'s epoch. */
async function exchange(from: Member, to: readonly Member[], body: string): Promise<void> {
  const sent = await from.group!.send(body);
  expect(sent.epoch).toBe(from.group!.epoch);
  await waitFor(() => to.every((m) => bodies(m).includes(body)));
  for (const m of to) {
    const got = m.inbox.find((r) => r.body === body)!;
    expect(got).toMatchObject({ from: from.identity.did, group: from.group!.id, contentType: 'application/json' });
    expect(got.params.wmp).toMatchObject({ encrypted: true, epoch: sent.epoch });
    expect(got.params.ciphertext).toBeUndefined();
  }
}

describe('Group: MLS groups through a relay', () => {
  it('three members form a group, remove one, restart one, take a late joiner, and survive concurrent commits', async () => {
    const relay = await bed.relay({ sqlite: 'group.db' });
    const url = relay.url;
    const secret = `plain-${toHex(randomBytes(8))}`;
    const gated = new GatedStore();
    const alice = await member('alice', url, 'ws', gated);
    const bob = await member('bob', url, 'ws', new FileStore(join(bed.dir, 'bob')));
    const carol = await member('carol', url, 'http');
    const daveIdentity = Identity.generate();

    // Bob and Carol publish key packages; Alice creates the group session with all three others
    // as participants (Dave joins later), and an MLS group with herself alone.
    for (const m of [bob, carol]) expect(await Group.publishKeyPackages(m.client, 2, opts(m))).toBe(2);
    const a = watch(
      alice,
      await Group.create(alice.client, [bob.identity.did, carol.identity.did, daveIdentity.did], opts(alice)),
    );
    expect(a).toMatchObject({ epoch: 0, joined: true, active: true, members: [alice.identity.did] });
    expect(a.id).toMatch(/^ses-/);

    // Bob and Carol enter the session and wait for their Welcome; Alice adds them by identity.
    const b = watch(bob, await Group.join(bob.client, a.id, opts(bob)));
    const c = watch(carol, await Group.join(carol.client, a.id, opts(carol)));
    expect(b.joined).toBe(false);
    await expect(b.send('too early')).rejects.toMatchObject({ code: 'ERR_GROUP_NOT_JOINED' });
    expect(await a.add(bob.identity.did)).toEqual({ epoch: 1, attempts: 1 });
    expect(await a.add(carol.identity.did)).toEqual({ epoch: 2, attempts: 1 });
    await b.whenJoined();
    await c.whenJoined();
    await waitFor(() => b.epoch === 2 && c.epoch === 2);
    for (const g of [a, b, c]) {
      expect([...g.members].sort()).toEqual([alice, bob, carol].map((m) => m.identity.did).sort());
      expect(g.groupId).toBe(a.groupId);
    }

    // Messages every way, decrypted before the application sees them.
    await exchange(alice, [bob, carol], `${secret}-1`);
    await exchange(bob, [alice, carol], `${secret}-2`);
    await exchange(carol, [alice, bob], `${secret}-3`);

    // Alice removes Carol: Carol is told, and cannot read what follows (even sent to her).
    expect(await a.remove(carol.identity.did)).toEqual({ epoch: 3, attempts: 1 });
    await waitFor(() => carol.removed.length === 1 && b.epoch === 3);
    expect(carol.removed[0]).toEqual({ by: alice.identity.did, epoch: 3 });
    expect(c.active).toBe(false);
    expect(c.removed).toBe(true);
    await a.send(`${secret}-4`, { to: [bob.identity.did, carol.identity.did] });
    await waitFor(() => bodies(bob).includes(`${secret}-4`) && carol.errors.length === 1);
    expect(carol.errors[0]!.error).toBeInstanceOf(GroupError);
    expect(carol.errors[0]).toMatchObject({
      error: { code: 'ERR_GROUP_REMOVED' },
      sender: alice.identity.did,
      epoch: 3,
    });
    expect(bodies(carol)).not.toContain(`${secret}-4`);
    await expect(c.send('still here?')).rejects.toMatchObject({ code: 'ERR_GROUP_REMOVED' });

    // Bob restarts: his group and client close; Alice writes twice meanwhile; a new client and
    // Group.restore from the same (file) store read both and go on.
    await b.close();
    await bob.client.close();
    await a.send(`${secret}-5`);
    await a.send(`${secret}-6`);
    const bob2 = await member('bob', url, 'ws', bob.store, bob.identity);
    const b2 = watch(bob2, await Group.restore(bob2.client, a.id, opts(bob2)));
    await waitFor(() => bodies(bob2).length === 2);
    expect(bodies(bob2)).toEqual([`${secret}-5`, `${secret}-6`]);
    expect(b2.epoch).toBe(3);
    await exchange(bob2, [alice], `${secret}-7`);

    // A message sent to Dave before he is a member is never readable for him.
    await a.send(`${secret}-8`, { to: [bob.identity.did, daveIdentity.did] });
    await waitFor(() => bodies(bob2).includes(`${secret}-8`));

    // Dave, a participant from the start, joins late: he reads only from his own epoch on.
    const dave = await member('dave', url, 'http', new MemoryClientStore(), daveIdentity);
    expect(await Group.publishKeyPackages(dave.client, 1, opts(dave))).toBe(1);
    const d = watch(dave, await Group.join(dave.client, a.id, opts(dave)));
    await waitFor(() => dave.errors.length === 1);
    expect(dave.errors[0]).toMatchObject({ error: { code: 'ERR_GROUP_NOT_JOINED' }, epoch: 3 });
    expect(await a.add(dave.identity.did)).toEqual({ epoch: 4, attempts: 1 });
    await d.whenJoined();
    await waitFor(() => b2.epoch === 4);
    expect(d.epoch).toBe(4);
    await exchange(alice, [bob2, dave], `${secret}-9`);
    expect(bodies(dave)).toEqual([`${secret}-9`]);

    // Alice and Bob commit in the same epoch: Alice's commit is held (its state write waits) while
    // Bob's wins epoch 4; Alice's then loses, is dropped, Bob's is processed, and hers is made again.
    gated.hold();
    const alicesUpdate = a.update();
    await waitFor(() => gated.held > 0);
    expect(await b2.update()).toEqual({ epoch: 5, attempts: 1 });
    gated.release();
    expect(await alicesUpdate).toEqual({ epoch: 6, attempts: 2 });
    await waitFor(() => b2.epoch === 6 && d.epoch === 6);
    for (const g of [a, b2, d]) {
      expect([...g.members].sort()).toEqual([alice, bob, dave].map((m) => m.identity.did).sort());
    }
    await exchange(alice, [bob2, dave], `${secret}-10`);
    await exchange(bob2, [alice, dave], `${secret}-11`);
    await exchange(dave, [alice, bob2], `${secret}-12`);

    // Nothing went wrong anywhere else, and nothing was handed over twice.
    expect(alice.errors).toEqual([]);
    expect(bob.errors).toEqual([]);
    expect(bob2.errors).toEqual([]);
    expect(dave.errors).toHaveLength(1);
    expect(carol.errors).toHaveLength(1);
    for (const m of [alice, bob2, carol, dave]) expect(new Set(bodies(m)).size).toBe(m.inbox.length);

    // Everything was acknowledged (commits and Welcomes by the groups, messages by the clients).
    await waitFor(async () => (await relay.relay.stores.queue.totals()).count === 0);

    // The relay never had the plaintext: not in its SQLite files.
    for (const m of [alice, bob2, carol, dave]) await m.client.close();
    await relay.close();
    const files = readdirSync(bed.dir).filter((f) => f.startsWith('group.db'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(join(bed.dir, f)).includes(secret)).toBe(false);
  });

  it('a commit whose answer never came is sent again by Group.restore after a restart of client and relay', async () => {
    const seed = randomBytes(32);
    let relay = await bed.relay({ sqlite: 'pending.db', seed });
    const port = relay.port;
    const alice = await member('alice', relay.url, 'ws');
    const bob = await member('bob', relay.url, 'http');
    await Group.publishKeyPackages(bob.client, 1, opts(bob));
    const a = watch(alice, await Group.create(alice.client, [bob.identity.did], opts(alice)));
    const b = watch(bob, await Group.join(bob.client, a.id, opts(bob)));
    await a.add(bob.identity.did);
    await b.whenJoined();

    // The relay goes away; Alice's update is made and stored, but never answered; she stops.
    await relay.close();
    const update = a.update().then(
      () => 'accepted',
      (e: unknown) => e,
    );
    await waitFor(async () => (await alice.store.get(`group/${a.id}/state`))!.includes('"submission"'));
    await alice.client.close();
    expect(await update).toBeInstanceOf(ConnectionClosedError);
    expect(a.epoch).toBe(1);

    // Relay and Alice come back (same SQLite file, same store): the restored group sends the
    // commit again before anything else, and both members move on to epoch 2.
    relay = await bed.relay({ sqlite: 'pending.db', seed, port });
    const alice2 = await member('alice', relay.url, 'ws', alice.store, alice.identity);
    const a2 = watch(alice2, await Group.restore(alice2.client, a.id, opts(alice2)));
    await a2.sync();
    expect(a2.epoch).toBe(2);
    await waitFor(() => b.epoch === 2);
    expect(await alice2.store.get(`group/${a.id}/state`)).not.toContain('"submission"');
    await exchange(alice2, [bob], 'after the restart');
    await exchange(bob, [alice2], 'welcome back');
    expect(await a2.update()).toEqual({ epoch: 3, attempts: 1 });
    await waitFor(() => b.epoch === 3);
    expect([...alice.errors, ...alice2.errors, ...bob.errors]).toEqual([]);
  });

  it('refuses bad calls with typed errors, reports bad messages as error events, and goes on', async () => {
    const { url, relay } = await bed.relay();
    const alice = await member('alice', url, 'ws');
    const bob = await member('bob', url, 'ws');
    const carol = await member('carol', url, 'http');

    await expect(Group.create(alice.client, [bob.identity.did], opts(bob))).rejects.toMatchObject({
      code: 'ERR_GROUP_IDENTITY',
    });
    await expect(Group.restore(alice.client, 'ses-unknown', opts(alice))).rejects.toMatchObject({
      code: 'ERR_GROUP_UNKNOWN',
    });
    await expect(Group.publishKeyPackages(bob.client, 0, opts(bob))).rejects.toBeInstanceOf(RangeError);

    const a = watch(alice, await Group.create(alice.client, [bob.identity.did], opts(alice)));
    await expect(a.add(carol.identity.did)).rejects.toMatchObject({ code: 'ERR_GROUP_NOT_PARTICIPANT' });
    await expect(a.add(bob.identity.did)).rejects.toMatchObject({ code: 'ERR_GROUP_NO_KEY_PACKAGE' });
    await expect(a.send('anyone?')).rejects.toMatchObject({ code: 'ERR_GROUP_NO_RECIPIENTS' });
    await expect(a.remove(alice.identity.did)).rejects.toMatchObject({ code: 'ERR_GROUP_MLS', reason: 'self_remove' });
    await expect(a.remove(bob.identity.did)).rejects.toMatchObject({ code: 'ERR_GROUP_MLS', reason: 'not_a_member' });
    expect(a.epoch).toBe(0);

    // Bob waits for a Welcome that does not come yet.
    const b = watch(bob, await Group.join(bob.client, a.id, opts(bob)));
    await expect(b.whenJoined({ timeoutMs: 50 })).rejects.toMatchObject({ code: 'ERR_GROUP_NOT_JOINED' });
    await Group.publishKeyPackages(bob.client, 1, opts(bob));
    await a.add(bob.identity.did);
    await b.whenJoined();
    await expect(a.add(bob.identity.did)).rejects.toMatchObject({ code: 'ERR_GROUP_MLS', reason: 'already_member' });

    // Bob stops reading; Alice sends one message, which waits in Bob's relay queue.
    await b.close();
    await expect(b.send('closed')).rejects.toMatchObject({ code: 'ERR_GROUP_CLOSED' });
    await a.send('first');
    let queued: Record<string, unknown> | undefined;
    await waitFor(async () => {
      const page = await relay.stores.queue.after(bob.identity.did, undefined, 100, Date.now());
      const m = page.messages.map((q) => JSON.parse(q.body)).find((x) => x.method === 'wmp.message.deliver');
      queued = m?.params;
      return queued !== undefined;
    });
    const { wmp, ciphertext, to } = queued as { wmp: Record<string, unknown>; ciphertext: string; to: string[] };
    // The same message again (a sender's retry: same client_message_id), and a tampered
    // ciphertext, sent raw on the session by Alice.
    const raw = (text: string, extra: Record<string, unknown> = {}) =>
      a.session.request('wmp.message.deliver', {
        wmp: { encrypted: true, epoch: wmp.epoch, ...extra },
        ciphertext: text,
        to,
      });
    const bytes = Buffer.from(ciphertext, 'base64url');
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 1;
    await raw(ciphertext, { client_message_id: wmp.client_message_id });
    await raw(bytes.toString('base64url'));
    await a.send('last');

    // Bob's group comes back on the same client: it reads the first message and the last one;
    // the retry is recognised and dropped, the tampered one is an error event.
    const b2 = watch(bob, await Group.restore(bob.client, a.id, opts(bob)));
    await waitFor(() => bodies(bob).includes('last'));
    expect(bodies(bob)).toEqual(['first', 'last']);
    expect(bob.errors.map((e) => [e.error.code, e.error.reason])).toEqual([['ERR_GROUP_UNREADABLE', 'decrypt_failed']]);
    expect(bob.errors[0]).toMatchObject({ method: 'wmp.message.deliver', sender: alice.identity.did, epoch: 1 });
    await exchange(bob, [alice], 'still fine');
    expect(b2.epoch).toBe(1);

    // While it runs, a second restore (or join) returns the same group.
    expect(await Group.restore(bob.client, a.id, opts(bob))).toBe(b2);
    expect(await Group.join(bob.client, a.id, opts(bob))).toBe(b2);

    // A damaged stored state is refused with a typed error.
    await b2.close();
    await bob.store.set(`group/${a.id}/state`, '{"v":1,');
    await expect(Group.restore(bob.client, a.id, opts(bob))).rejects.toMatchObject({ code: 'ERR_GROUP_STATE' });
    await bob.store.set(`group/${a.id}/state`, (await alice.store.get(`group/${a.id}/state`))!);
    await expect(Group.restore(bob.client, a.id, opts(bob))).rejects.toMatchObject({ code: 'ERR_GROUP_STATE' });
    expect(alice.errors).toEqual([]);
  });

  it('a member restarted between messages and commits, online or not, reads everything once and goes on', async () => {
    const { url } = await bed.relay({ sqlite: 'stream.db' });
    const alice = await member('alice', url, 'ws');
    let bob = await member('bob', url, 'http', new FileStore(join(bed.dir, 'bob-stream')));
    const bobs = [bob];
    await Group.publishKeyPackages(bob.client, 1, opts(bob));
    const a = watch(alice, await Group.create(alice.client, [bob.identity.did], opts(alice)));
    let b = watch(bob, await Group.join(bob.client, a.id, opts(bob)));
    await a.add(bob.identity.did);
    await b.whenJoined();

    const read: unknown[] = [];
    const sent: string[] = [];
    const restart = async () => {
      read.push(...bodies(bob));
      await b.close();
      await bob.client.close();
      bob = await member('bob', url, 'http', bob.store, bob.identity);
      bobs.push(bob);
      b = watch(bob, await Group.restore(bob.client, a.id, opts(bob)));
    };
    for (let round = 0; round < 6; round++) {
      const offline = round % 2 === 1;
      if (offline) {
        await b.close();
        await bob.client.close();
      }
      sent.push(`r${round}-1`);
      await a.send(`r${round}-1`);
      if (round % 3 !== 2) await a.update();
      sent.push(`r${round}-2`);
      await a.send(`r${round}-2`);
      if (offline) {
        read.push(...bodies(bob));
        bob = await member('bob', url, 'http', bob.store, bob.identity);
        bobs.push(bob);
        b = watch(bob, await Group.restore(bob.client, a.id, opts(bob)));
      }
      await waitFor(() => read.length + bob.inbox.length === sent.length);
      expect(b.epoch).toBe(a.epoch);
      // Bob commits and writes too, then restarts right after.
      if (round % 3 === 2) expect((await b.update()).attempts).toBe(1);
      const reply = `bob-${round}`;
      await b.send(reply);
      await waitFor(() => bodies(alice).includes(reply));
      await restart();
    }
    read.push(...bodies(bob));
    expect(read).toEqual(sent);
    expect(b.epoch).toBe(a.epoch);
    expect(alice.errors).toEqual([]);
    expect(bobs.flatMap((m) => m.errors)).toEqual([]);
    expect(bobs).toHaveLength(10);
  });
});
