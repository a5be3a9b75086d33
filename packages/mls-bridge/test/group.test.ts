import { describe, expect, it } from 'vitest';
import { inspectMessage, MlsGroup } from '../src/index.js';
import { deliverCommit, exchange, expectRefused, groupOf, newClient, td, te } from './harness.js';

describe('MlsGroup: groups and messages', () => {
  it('two members exchange messages both ways', async () => {
    const { groups } = await groupOf(2);
    const [alice, bob] = groups as [MlsGroup, MlsGroup];
    expect(alice.epoch).toBe(1);
    expect(bob.epoch).toBe(1);
    expect(bob.groupId).toBe(alice.groupId);
    expect(bob.members).toEqual(alice.members);
    expect(alice.members).toEqual([alice.identity, bob.identity]);
    for (let i = 0; i < 3; i++) {
      await exchange(alice, [bob], `a->b ${i}`);
      await exchange(bob, [alice], `b->a ${i}`);
    }
  });

  it('three members exchange messages in every direction, across a self-update', async () => {
    const { groups, relay } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    await exchange(a, [b, c], 'from a');
    await exchange(b, [a, c], 'from b');
    await exchange(c, [a, b], 'from c');
    const upd = await c.update();
    expect(upd.welcome).toBeUndefined();
    expect(await deliverCommit(relay, c, upd, [a, b])).toBe(true);
    expect([a.epoch, b.epoch, c.epoch]).toEqual([2, 2, 2]);
    await exchange(a, [b, c], 'after update');
    await exchange(c, [a, b], 'after update too');
  });

  it('a removed member cannot read what follows, and the others carry on', async () => {
    const { groups, relay } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    await exchange(a, [b, c], 'before removal');
    const rem = await a.remove(c.identity);
    expect(rem.welcome).toBeUndefined();
    // The removal is a real Remove proposal: c's processing of it says so.
    expect(relay.submit(rem.commit)).toBe(true);
    await a.confirmCommit();
    const atB = await b.process(rem.commit);
    expect(atB).toMatchObject({ kind: 'commit', sender: a.identity, removed: [c.identity], removedSelf: false });
    const atC = await c.process(rem.commit);
    expect(atC).toMatchObject({ kind: 'commit', removed: [c.identity], removedSelf: true });
    expect(c.active).toBe(false);
    expect(a.members).toEqual([a.identity, b.identity]);
    expect(b.members).toEqual(a.members);

    const after = await a.encrypt(te.encode('secret after removal'));
    expect(td.decode((await b.decrypt(after.ciphertext)).plaintext)).toBe('secret after removal');
    await expectRefused(c.decrypt(after.ciphertext), 'removed');
    await expectRefused(c.encrypt(te.encode('still here?')), 'removed');
    await expectRefused(c.update(), 'removed');
    await exchange(b, [a], 'still fine');
  });

  it('a member who missed its removal cannot read the next epoch either', async () => {
    const { groups, relay } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    const rem = await a.remove(c.identity);
    expect(await deliverCommit(relay, a, rem, [b])).toBe(true);
    const after = await a.encrypt(te.encode('not for c'));
    await expectRefused(c.decrypt(after.ciphertext), 'unknown_epoch');
    expect(c.active).toBe(true);
  });

  it('a late joiner reads only from its epoch on', async () => {
    const { groups, relay } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const early = await a.encrypt(te.encode('before carol'));
    expect(td.decode((await b.decrypt(early.ciphertext)).plaintext)).toBe('before carol');

    const carol = await newClient();
    const add = await b.add((await carol.createKeyPackage()).keyPackage);
    expect(add.nextEpoch).toBe(add.epoch + 1);
    expect(await deliverCommit(relay, b, add, [a])).toBe(true);
    const c = await MlsGroup.join(carol, add.welcome!);
    expect(c.epoch).toBe(add.nextEpoch);
    expect(c.members).toEqual([a.identity, b.identity, carol.identity]);

    await expectRefused(c.decrypt(early.ciphertext), 'epoch_too_old');
    await exchange(a, [b, c], 'welcome carol');
    await exchange(c, [a, b], 'hello all');
  });

  it('two members commit in the same epoch: the first wins, the other rebases, nobody forks', async () => {
    const { groups, relay } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    const dave = await newClient();
    const addDave = await a.add((await dave.createKeyPackage()).keyPackage);
    const updB = await b.update();
    expect(addDave.epoch).toBe(updB.epoch);
    expect(inspectMessage(updB.commit)).toMatchObject({ contentType: 'commit', epoch: updB.epoch, groupId: b.groupId });
    // While pending, the epoch is still the old one, and no second commit can be made.
    expect(b.epoch).toBe(updB.epoch);
    expect(b.pendingCommit).toMatchObject({ kind: 'update', commit: updB.commit, epoch: updB.epoch });
    await expectRefused(b.update(), 'commit_pending');

    // a's commit reaches the relay first.
    expect(relay.submit(addDave.commit)).toBe(true);
    await a.confirmCommit();
    expect(relay.submit(updB.commit)).toBe(false);

    // The winning commit is refused while b's own is pending: b discards first, then processes.
    await expectRefused(b.process(addDave.commit), 'commit_pending');
    await b.discardPendingCommit();
    expect(b.pendingCommit).toBeUndefined();
    await expectRefused(b.discardPendingCommit(), 'no_pending_commit');
    await b.process(addDave.commit);
    await c.process(addDave.commit);
    const d = await MlsGroup.join(dave, addDave.welcome!);

    // b rebases: the same intent, now at the new epoch.
    const again = await b.update();
    expect(again.epoch).toBe(addDave.nextEpoch);
    expect(await deliverCommit(relay, b, again, [a, c, d])).toBe(true);

    const all = [a, b, c, d];
    expect(new Set(all.map((g) => g.epoch))).toEqual(new Set([again.nextEpoch]));
    for (const g of all) expect(g.members).toEqual(a.members);
    for (const g of all)
      await exchange(
        g,
        all.filter((x) => x !== g),
        `from ${g.identity.slice(-6)}`,
      );
  });

  it('keeps reading the old epoch while its commit is pending, and after confirming', async () => {
    const { groups, relay } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const upd = await a.update();
    // b keeps talking in the old epoch; a still reads and writes there until it confirms.
    const m1 = await b.encrypt(te.encode('one'));
    const m2 = await b.encrypt(te.encode('two'));
    expect(td.decode((await a.decrypt(m1.ciphertext)).plaintext)).toBe('one');
    await exchange(a, [b], 'sent while pending');
    expect(relay.submit(upd.commit)).toBe(true);
    await a.confirmCommit();
    await expectRefused(a.confirmCommit(), 'no_pending_commit');
    // m2 is from the previous epoch, read through the retained keys (advanced past m1).
    expect(td.decode((await a.decrypt(m2.ciphertext)).plaintext)).toBe('two');
    await expectRefused(a.decrypt(m1.ciphertext), 'decrypt_failed');
    await b.process(upd.commit);
    await exchange(a, [b], 'new epoch');
    await exchange(b, [a], 'new epoch back');
  });

  it('a message from the epoch of an accepted but unconfirmed commit asks for the confirmation first', async () => {
    const { groups, relay } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const upd = await a.update();
    expect(relay.submit(upd.commit)).toBe(true);
    await b.process(upd.commit);
    const early = await b.encrypt(te.encode('early'));
    await expectRefused(a.decrypt(early.ciphertext), 'commit_pending');
    await a.confirmCommit();
    expect(td.decode((await a.decrypt(early.ciphertext)).plaintext)).toBe('early');
  });

  it('a member leaves by proposing its own removal, which another member commits', async () => {
    const { groups, relay } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    await expectRefused(a.remove(a.identity), 'self_remove');
    const leave = await c.proposeRemove(c.identity);
    expect(inspectMessage(leave)).toMatchObject({ contentType: 'proposal' });
    expect(await a.process(leave)).toEqual({ kind: 'proposal', sender: c.identity, epoch: a.epoch });
    expect(await b.process(leave)).toMatchObject({ kind: 'proposal', sender: c.identity });
    // Received proposals must be committed before sending.
    await expectRefused(a.encrypt(te.encode('x')), 'proposals_pending');
    const commit = await a.update();
    expect(relay.submit(commit.commit)).toBe(true);
    await a.confirmCommit();
    expect(await b.process(commit.commit)).toMatchObject({ kind: 'commit', removed: [c.identity] });
    expect(await c.process(commit.commit)).toMatchObject({ kind: 'commit', removedSelf: true });
    expect(a.members).toEqual([a.identity, b.identity]);
    await exchange(a, [b], 'two of us');
  });

  it('adds several members in one commit, and one Welcome serves them all', async () => {
    const { groups } = await groupOf(4);
    const [a, b, c, d] = groups as [MlsGroup, MlsGroup, MlsGroup, MlsGroup];
    expect(new Set(groups.map((g) => g.epoch))).toEqual(new Set([1]));
    await exchange(d, [a, b, c], 'last in, first to speak');
  });

  it('runs operations one at a time when they are started together', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const sent = await Promise.all(Array.from({ length: 8 }, (_, i) => a.encrypt(te.encode(`m${i}`))));
    const read = await Promise.all(sent.map((m) => b.decrypt(m.ciphertext)));
    expect(read.map((r) => td.decode(r.plaintext))).toEqual(sent.map((_, i) => `m${i}`));
  });

  it('publishes a GroupInfo for the session', async () => {
    const { groups } = await groupOf(2);
    const info = inspectMessage(await groups[0]!.groupInfo());
    expect(info).toEqual({ wireformat: 'group_info', groupId: groups[0]!.groupId, epoch: 1 });
  });
});
