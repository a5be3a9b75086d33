import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { MlsClient, MlsGroup } from '../src/index.js';
import { CommitOrderer, exchange, expectRefused, newClient, td, te } from './harness.js';

/** A member whose every state change lands in `disk`, and who can "restart" from it. */
class Member {
  disk: Uint8Array | undefined;
  writes = 0;
  group!: MlsGroup;
  constructor(readonly client: MlsClient) {}

  readonly options = {
    persist: (saved: Uint8Array) => {
      this.disk = saved;
      this.writes++;
    },
  };

  async restart(): Promise<MlsGroup> {
    // A new client object from the same identity key, as after a process restart.
    this.group = await MlsGroup.restore(this.disk!, this.client, this.options);
    return this.group;
  }
}

describe('persistence', () => {
  it('a member restarted between any two messages continues', async () => {
    const relay = new CommitOrderer();
    const [a, b, c] = (await Promise.all([0, 1, 2].map(async () => new Member(await newClient())))) as [
      Member,
      Member,
      Member,
    ];
    a.group = await MlsGroup.create(a.client, a.options);
    const add = await a.group.add((await b.client.createKeyPackage()).keyPackage);
    relay.submit(add.commit);
    await a.group.confirmCommit();
    b.group = await MlsGroup.join(b.client, add.welcome!, b.options);

    // A script of steps; every member restarts from its last persisted state between steps.
    const steps: (() => Promise<void>)[] = [
      () => exchange(a.group, [b.group], 'one'),
      () => exchange(b.group, [a.group], 'two'),
      async () => {
        const m = await a.group.encrypt(te.encode('three'));
        await b.restart(); // between encrypt and decrypt
        expect(td.decode((await b.group.decrypt(m.ciphertext)).plaintext)).toBe('three');
      },
      async () => {
        const u = await b.group.update();
        await b.restart(); // with the commit pending
        expect(b.group.pendingCommit?.commit).toBe(u.commit);
        expect(relay.submit(u.commit)).toBe(true);
        await b.group.confirmCommit();
        await a.group.process(u.commit);
      },
      async () => {
        const kp = await c.client.createKeyPackage();
        const r = await a.group.add(kp.keyPackage);
        await a.restart();
        expect(a.group.pendingCommit).toEqual({ kind: 'add', ...r });
        expect(relay.submit(a.group.pendingCommit!.commit)).toBe(true);
        await a.group.confirmCommit();
        await b.group.process(r.commit);
        c.group = await MlsGroup.join(c.client, r.welcome!, c.options);
      },
      () => exchange(c.group, [a.group, b.group], 'four'),
      () => exchange(a.group, [b.group, c.group], 'five'),
      async () => {
        const r = await b.group.remove(a.group.identity);
        expect(relay.submit(r.commit)).toBe(true);
        await b.group.confirmCommit();
        await c.group.process(r.commit);
        await a.group.process(r.commit);
        expect(a.group.active).toBe(false);
      },
      () => exchange(b.group, [c.group], 'six'),
    ];
    for (const step of steps) {
      await step();
      for (const m of [a, b, c]) if (m.disk && m.group) await m.restart();
    }
    expect(a.group.active).toBe(false);
    await exchange(c.group, [b.group], 'seven');
    expect(b.group.epoch).toBe(4);
    expect(a.writes + b.writes + c.writes).toBeGreaterThan(20);
  });

  it('a commit pending at restart can still be discarded, and the group rebases', async () => {
    const relay = new CommitOrderer();
    const alice = await newClient();
    const bob = await newClient();
    let a = await MlsGroup.create(alice);
    const add = await a.add((await bob.createKeyPackage()).keyPackage);
    relay.submit(add.commit);
    await a.confirmCommit();
    const b = await MlsGroup.join(bob, add.welcome!);

    const mine = await a.update();
    const theirs = await b.update();
    expect(relay.submit(theirs.commit)).toBe(true);
    await b.confirmCommit();
    expect(relay.submit(mine.commit)).toBe(false);

    a = await MlsGroup.restore(a.save(), alice);
    expect(a.pendingCommit?.kind).toBe('update');
    await a.discardPendingCommit();
    await a.process(theirs.commit);
    a = await MlsGroup.restore(a.save(), alice);
    expect(a.pendingCommit).toBeUndefined();
    await exchange(a, [b], 'rebased');
    await exchange(b, [a], 'and back');
  });

  it('a failed persist leaves the group as it was', async () => {
    const alice = await newClient();
    const bob = await newClient();
    let failing = false;
    const persist = () => {
      if (failing) throw new Error('disk full');
    };
    const a = await MlsGroup.create(alice);
    const add = await a.add((await bob.createKeyPackage()).keyPackage);
    await a.confirmCommit();
    const b = await MlsGroup.join(bob, add.welcome!, { persist });
    const m = await a.encrypt(te.encode('keep me'));
    failing = true;
    await expect(b.decrypt(m.ciphertext)).rejects.toThrow('disk full');
    await expect(b.encrypt(te.encode('lost'))).rejects.toThrow('disk full');
    failing = false;
    expect(td.decode((await b.decrypt(m.ciphertext)).plaintext)).toBe('keep me');
    await exchange(b, [a], 'back');
  });

  it('refuses saved state that is corrupt or belongs to someone else, and never holds the identity key', async () => {
    const keypair = generateKeypair();
    const alice = await MlsClient.create({ identity: keypair });
    const a = await MlsGroup.create(alice);
    const saved = a.save();
    expect(Buffer.from(saved).includes(Buffer.from(keypair.exportSeed()))).toBe(false);

    await expectRefused(MlsGroup.restore(saved, await newClient()), 'invalid_state');
    await expectRefused(MlsGroup.restore(saved.subarray(0, saved.length - 1), alice), 'invalid_state');
    await expectRefused(MlsGroup.restore(new Uint8Array([...saved, 0]), alice), 'invalid_state');
    await expectRefused(MlsGroup.restore(new Uint8Array(64), alice), 'invalid_state');
    // The same identity in a new client object (a restarted process) is the owner.
    const again = await MlsClient.create({ identity: keypair });
    expect((await MlsGroup.restore(saved, again)).epoch).toBe(0);
  });

  it('key packages survive a client restart and are single use', async () => {
    const keypair = generateKeypair();
    let stored: Uint8Array | undefined;
    const persistKeyPackages = (saved: Uint8Array) => {
      stored = saved;
    };
    const before = await MlsClient.create({ identity: keypair, persistKeyPackages });
    const kp1 = await before.createKeyPackage();
    const kp2 = await before.createKeyPackage();
    expect(before.pendingKeyPackages.map((k) => k.ref)).toEqual([kp1.ref, kp2.ref]);
    expect(Buffer.from(stored!).includes(Buffer.from(keypair.exportSeed()))).toBe(false);

    const after = await MlsClient.create({
      identity: keypair,
      keyPackages: stored!,
      persistKeyPackages,
    });
    expect(after.pendingKeyPackages).toEqual(before.pendingKeyPackages);

    const owner = await MlsGroup.create(await newClient());
    const add = await owner.add(kp2.keyPackage);
    await owner.confirmCommit();
    const joined = await MlsGroup.join(after, add.welcome!);
    expect(joined.members).toContain(after.identity);
    expect(after.pendingKeyPackages.map((k) => k.ref)).toEqual([kp1.ref]);
    await expectRefused(MlsGroup.join(after, add.welcome!), 'welcome_not_for_us');
    await exchange(joined, [owner], 'joined after restart');

    await expectRefused(MlsClient.create({ identity: keypair, keyPackages: new Uint8Array(3) }), 'invalid_state');
  });
});
