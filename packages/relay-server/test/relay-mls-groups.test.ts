import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, toHex } from '@wmp/jcs-signing';
import { MlsBridgeError, MlsGroup } from '@wmp/mls-bridge';
import { WmpSession } from '@wmp/session';
import { afterAll, describe, expect, it } from 'vitest';
import { createJsonLogger } from '../src/node.js';
import { SqliteStore } from '../src/sqlite.js';
import { CLIENT_CAPABILITIES, codeOf, connectPeer, relayTestbed, waitFor } from './fixtures/relay-clients.js';
import { Member } from './fixtures/relay-mls-members.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-mls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const testbed = relayTestbed();
const MLS = { mode: 'mls' as const, cipher_suites: [1] };

/** The -31004 `data.reason` (or the code) a call was refused with. */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'accepted';
  } catch (e) {
    if (e instanceof MlsBridgeError) return e.reason;
    const err = e as { code?: number; data?: { reason?: string } };
    return err.code === -31004 ? err.data?.reason : err.code;
  }
}

/** A relay on a fresh SQLite file that logs everything (debug) into `logs`. */
async function relayWithLogs(): Promise<{ url: string; path: string; logs: string[] }> {
  const path = join(dir, `relay-${++files}.db`);
  const logs: string[] = [];
  const url = await testbed.setup({
    store: (limits) => SqliteStore.open({ path, ...limits }),
    logger: createJsonLogger({ level: 'debug', write: (line) => logs.push(line) }),
  });
  return { url, path, logs };
}

async function members(url: string, n: number): Promise<Member[]> {
  const out: Member[] = [];
  for (let i = 0; i < n; i++) out.push(await Member.create(await testbed.open(url, { register: false })));
  return out;
}

/** The first member opens an `mls` group session at the relay with the others as participants. */
async function groupSession(creator: Member, others: readonly Member[]): Promise<string> {
  const session = await WmpSession.open(creator.peer, {
    signer: creator.keypair,
    participants: others.map((m) => m.did),
    capabilities: CLIENT_CAPABILITIES,
    security: MLS,
  });
  creator.sessionId = session.id;
  return session.id;
}

/** `from` sends `body`; each of `to` reads it, from `from`. */
async function exchange(from: Member, to: readonly Member[], body: string): Promise<void> {
  const counts = to.map((m) => m.read.length);
  await from.send(body);
  await waitFor(() => to.every((m, i) => m.read.length > counts[i]!));
  for (const m of to) expect(m.read.at(-1)).toMatchObject({ body, sender: from.did, epoch: from.group!.epoch });
}

/** Flips a bit near the end of a base64url text (inside the encrypted payload of a private message). */
function tamper(text: string): string {
  const bytes = Buffer.from(text, 'base64url');
  const at = bytes.length - 3;
  bytes[at] = (bytes[at] ?? 0) ^ 1;
  return bytes.toString('base64url');
}

describe('MLS group sessions through the relay (mls-bridge on every client)', () => {
  it('three parties and a late joiner: welcomes routed, remove, restore, one winner per epoch', async () => {
    const { url, path, logs } = await relayWithLogs();
    const secret = `plain-${toHex(randomBytes(8))}`;
    const body = (n: number) => `${secret}-${n}`;
    const [alice, bob, carol, dave] = (await members(url, 4)) as [Member, Member, Member, Member];
    for (const m of [bob, carol, dave]) expect(await m.publishKeyPackages(2)).toMatchObject({ accepted: 2 });

    const sessionId = await groupSession(alice, [bob, carol, dave]);
    await bob.joinSession(sessionId);
    await carol.joinSession(sessionId);

    // Alice makes the group with Bob in it and registers it at the relay, Bob's Welcome inside.
    alice.group = await MlsGroup.create(alice.mls);
    const withBob = await alice.group.add(await alice.fetchKeyPackage(bob.did));
    await alice.group.confirmCommit();
    const created = await alice.request('wmp.mls.group.create', {
      group_id: alice.group.groupId,
      cipher_suite: 1,
      group_info: await alice.group.groupInfo(),
      welcomes: { [bob.did]: withBob.welcome },
    });
    expect(created).toMatchObject({ group_id: alice.group.groupId, epoch: 1 });
    await waitFor(() => bob.group?.epoch === 1 && carol.received.length === 1);
    // The Welcome went to Bob only.
    expect(Object.keys(bob.received[0]!.params.welcomes)).toEqual([bob.did]);
    expect(carol.received[0]).toMatchObject({ method: 'wmp.mls.group.create' });
    expect(carol.received[0]!.params.welcomes).toBeUndefined();
    expect(carol.received[0]!.params.wmp).toMatchObject({ sender: alice.did, epoch: 1, session_id: sessionId });

    // Alice adds Carol: the commit to Bob, the commit and the Welcome to Carol.
    const carolKp = await alice.fetchKeyPackage(carol.did);
    expect(
      await alice.commit(
        'add',
        (g) => g.add(carolKp),
        (c) => ({ participant: carol.did, welcome: c.welcome }),
      ),
    ).toEqual({
      epoch: 2,
    });
    await waitFor(() => bob.group?.epoch === 2 && carol.group?.epoch === 2);
    const bobAdd = bob.received.find((m) => m.method === 'wmp.mls.group.add')!;
    expect(bobAdd.params.participant).toBe(carol.did);
    expect(bobAdd.params.welcome).toBeUndefined();
    expect(carol.received.find((m) => m.method === 'wmp.mls.group.add')!.params.welcome).toEqual(expect.any(String));
    expect(alice.group.members.sort()).toEqual([alice.did, bob.did, carol.did].sort());

    // Messages every way.
    await exchange(alice, [bob, carol], body(1));
    await exchange(bob, [alice, carol], body(2));
    await exchange(carol, [alice, bob], body(3));

    // Carol saves her state and goes away; Alice writes twice; Carol comes back on a new
    // connection from the saved state, resumes the group session and reads both.
    await carol.settled();
    const saved = carol.group!.save();
    await testbed.disconnect(carol.peer);
    await exchange(alice, [bob], body(4));
    await exchange(bob, [alice], body(5));
    expect(await carol.restart(await connectPeer(url), saved)).toBe(2);
    await waitFor(() => carol.read.length === 4);
    expect(carol.read.slice(2).map((r) => r.body)).toEqual([body(4), body(5)]);
    await exchange(carol, [alice, bob], body(6));

    // Alice removes Bob: he cannot read what follows, Carol can.
    expect(
      await alice.commit(
        'remove',
        (g) => g.remove(bob.did),
        () => ({ participant: bob.did }),
      ),
    ).toEqual({ epoch: 3 });
    await waitFor(() => bob.group?.active === false && carol.group?.epoch === 3);
    const bobRead = bob.read.length;
    await exchange(alice, [carol], body(7));
    await waitFor(() => bob.unreadable.length === 1);
    expect(bob.unreadable).toEqual([{ reason: 'removed', epoch: 3 }]);
    expect(bob.read).toHaveLength(bobRead);
    expect(await refusal(bob.send('still here?'))).toBe('removed');

    // Alice and Carol commit in the same epoch: one wins, the other is told epoch_conflict,
    // discards, processes the winner and commits again. No fork.
    const sent: Record<string, string> = {};
    const update = (m: Member) =>
      m.commit('update', async (g) => {
        const c = await g.update();
        sent[m.did] = c.commit;
        return c;
      });
    const results = await Promise.all([update(alice), update(carol)]);
    expect(results).toEqual(expect.arrayContaining([{ epoch: 4 }, { conflict: 4 }]));
    const [winner, loser] = 'epoch' in results[0]! ? [alice, carol] : [carol, alice];
    await waitFor(() => loser.group?.epoch === 4);
    // The winner's commit again (a lost answer) is recognised; the loser's stale one is refused.
    expect(await winner.request('wmp.mls.group.update', { commit: sent[winner.did] })).toMatchObject({ epoch: 4 });
    const stale = await codeOf(loser.request('wmp.mls.group.update', { commit: sent[loser.did] }));
    expect(stale).toBe(-31004);
    await expect(loser.request('wmp.mls.group.update', { commit: sent[loser.did] })).rejects.toMatchObject({
      data: { reason: 'epoch_conflict', epoch: 4 },
    });
    expect(await loser.commit('update', (g) => g.update())).toEqual({ epoch: 5 });
    await waitFor(() => winner.group?.epoch === 5);
    await exchange(alice, [carol], body(8));
    await exchange(carol, [alice], body(9));

    // Dave, a participant from the start, is added while away, then joins the session: the join
    // hands him the group's backlog at once (no register); he reads only from his epoch on.
    const daveKp = await alice.fetchKeyPackage(dave.did);
    expect(
      await alice.commit(
        'add',
        (g) => g.add(daveKp),
        (c) => ({ participant: dave.did, welcome: c.welcome }),
      ),
    ).toEqual({
      epoch: 6,
    });
    await waitFor(() => carol.group?.epoch === 6);
    await exchange(alice, [carol], body(10));
    await dave.joinSession(sessionId);
    await waitFor(() => dave.read.length === 1);
    await dave.settled();
    expect(dave.group?.epoch).toBe(6);
    expect(dave.read).toEqual([{ body: body(10), sender: alice.did, epoch: 6 }]);
    // The nine messages sent before he was added: received (the backlog), not readable.
    expect(dave.unreadable.map((u) => u.reason)).toEqual(Array(9).fill('not_a_member'));
    const older = dave.ciphertexts.find((p) => p.wmp.epoch === 5)!;
    expect(await refusal(dave.group!.decryptParams(older))).toBe('epoch_too_old');
    await exchange(dave, [alice, carol], body(11));
    await exchange(carol, [alice, dave], body(12));

    // Everyone still in the group ends in the same epoch with the same members.
    await Promise.all([alice, carol, dave].map((m) => m.settled()));
    for (const m of [alice, carol, dave]) {
      expect(m.group!.epoch).toBe(6);
      expect(m.group!.members.sort()).toEqual([alice.did, carol.did, dave.did].sort());
      expect(m.failures).toEqual([]);
    }
    expect(carol.unreadable).toEqual([]);
    expect(alice.unreadable).toEqual([]);

    // Nothing of the plaintext reached the relay's file or its logs (debug level).
    await testbed.closeRelay();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join('\n')).not.toContain(secret);
    const base = path.split('/').pop()!;
    const stored = readdirSync(dir).filter((f) => f.startsWith(base));
    expect(stored).toContain(base);
    for (const f of stored) expect(readFileSync(join(dir, f)).includes(secret)).toBe(false);
  });

  it('refuses bad MLS input with typed errors, and the group goes on', async () => {
    const { url } = await relayWithLogs();
    const [alice, bob, carol] = (await members(url, 3)) as [Member, Member, Member];
    await bob.publishKeyPackages(1);
    const sessionId = await groupSession(alice, [bob, carol]);
    await bob.joinSession(sessionId);
    await carol.joinSession(sessionId);
    alice.group = await MlsGroup.create(alice.mls);

    // Before the group is registered: no commit, no join notice.
    const early = await alice.group.update();
    expect(await refusal(alice.request('wmp.mls.group.update', { commit: early.commit }))).toBe('unknown_group');
    expect(await refusal(alice.request('wmp.mls.group.join', { welcome_processed: true }))).toBe('unknown_group');
    await alice.group.discardPendingCommit();

    const add = await alice.group.add(await alice.fetchKeyPackage(bob.did));
    await alice.group.confirmCommit();
    const createParams = {
      group_id: alice.group.groupId,
      cipher_suite: 1,
      group_info: await alice.group.groupInfo(),
      welcomes: { [bob.did]: add.welcome },
    };
    // A Welcome for someone outside the session, or one that is no Welcome; a GroupInfo of another group.
    const outsider = (await members(url, 1))[0]!;
    expect(
      await codeOf(
        alice.request('wmp.mls.group.create', { ...createParams, welcomes: { [outsider.did]: add.welcome } }),
      ),
    ).toBe(-31008);
    expect(
      await refusal(alice.request('wmp.mls.group.create', { ...createParams, welcomes: { [bob.did]: add.commit } })),
    ).toBe('malformed');
    const other = await MlsGroup.create(alice.mls);
    expect(
      await refusal(alice.request('wmp.mls.group.create', { ...createParams, group_info: await other.groupInfo() })),
    ).toBe('wrong_group');
    expect(await alice.request('wmp.mls.group.create', createParams)).toMatchObject({ epoch: 1 });
    // The same create again is answered again; another group on this session is refused.
    expect(await alice.request('wmp.mls.group.create', createParams)).toMatchObject({ epoch: 1 });
    expect(
      await alice
        .request('wmp.mls.group.create', { group_id: other.groupId, cipher_suite: 1 })
        .catch((e: { data: unknown }) => e.data),
    ).toEqual({ reason: 'group_exists', group_id: alice.group.groupId, epoch: 1 });
    await waitFor(() => bob.group?.epoch === 1);
    expect(await bob.request('wmp.mls.group.join', { welcome_processed: true })).toMatchObject({ epoch: 1 });
    await waitFor(() => alice.received.some((m) => m.method === 'wmp.mls.group.join'));

    // Who may call: not someone outside the session (not bound: -31002), not on a hop session.
    expect(
      await codeOf(outsider.request('wmp.mls.group.update', { commit: early.commit }, { session_id: sessionId })),
    ).toBe(-31002);
    expect(
      await codeOf(
        outsider.client.session.request('wmp.mls.group.create', { group_id: other.groupId, cipher_suite: 1 }),
      ),
    ).toBe(-31002);

    // Commits: garbage, not a commit, another group's, naming a non-participant.
    expect(await refusal(alice.request('wmp.mls.group.update', { commit: 'AAEC' }))).toBe('malformed');
    expect(await codeOf(alice.request('wmp.mls.group.update', { commit: 'not base64url!' }))).toBe(-32602);
    const app = await alice.group.encrypt(new TextEncoder().encode('x'));
    expect(await refusal(alice.request('wmp.mls.group.update', { commit: app.ciphertext }))).toBe('malformed');
    const otherCommit = await other.update();
    expect(await refusal(alice.request('wmp.mls.group.update', { commit: otherCommit.commit }))).toBe('wrong_group');
    const real = await alice.group.update();
    expect(
      await codeOf(alice.request('wmp.mls.group.remove', { participant: outsider.did, commit: real.commit })),
    ).toBe(-31008);
    expect(await refusal(alice.request('wmp.mls.group.update', { commit: real.commit }, { epoch: 7 }))).toBe(
      'epoch_mismatch',
    );
    await alice.group.discardPendingCommit();

    // Encrypted delivers: plaintext is refused in an mls session (-31003); garbage, a wrong
    // epoch claim, another group's message, a future epoch are refused at the relay.
    expect(await codeOf(alice.request('wmp.message.deliver', { body: 'plain' }))).toBe(-31003);
    expect(
      await refusal(alice.request('wmp.message.deliver', { ciphertext: 'AAEC' }, { encrypted: true, epoch: 1 })),
    ).toBe('malformed');
    const good = await alice.group.encryptParams({ wmp: { sender: alice.did }, body: 'ok' });
    expect(
      await refusal(
        alice.request('wmp.message.deliver', { ciphertext: good.ciphertext }, { encrypted: true, epoch: 0 }),
      ),
    ).toBe('epoch_mismatch');
    const foreign = await other.encryptParams({ wmp: {}, body: 'x' });
    expect(
      await refusal(
        alice.request('wmp.message.deliver', { ciphertext: foreign.ciphertext }, { encrypted: true, epoch: 1 }),
      ),
    ).toBe('wrong_group');
    const fork = await MlsGroup.restore(alice.group.save(), alice.mls);
    await fork.update();
    await fork.confirmCommit();
    const ahead = await fork.encryptParams({ wmp: {}, body: 'from the future' });
    await expect(
      alice.request('wmp.message.deliver', { ciphertext: ahead.ciphertext }, { encrypted: true, epoch: 2 }),
    ).rejects.toMatchObject({ code: -31004, data: { reason: 'unknown_epoch', epoch: 1 } });

    // A tampered ciphertext passes the relay (its header is intact) and fails at Bob, who goes on.
    const bobSaved = bob.group!.save();
    await alice.request(
      'wmp.message.deliver',
      { ciphertext: tamper(good.ciphertext as string) },
      { encrypted: true, epoch: 1 },
    );
    await waitFor(() => bob.unreadable.length === 1);
    expect(bob.unreadable[0]!.reason).toBe('decrypt_failed');
    await exchange(alice, [bob], 'after the tampered one');

    // A message from an epoch Bob has not reached: unknown_epoch at Bob (his saved copy), nothing changes.
    await alice.commit('update', (g) => g.update());
    await waitFor(() => bob.group?.epoch === 2);
    const behind = await MlsGroup.restore(bobSaved, bob.mls);
    const next = await alice.group.encryptParams({ wmp: { sender: alice.did }, body: 'epoch 2' });
    expect(await refusal(behind.decryptParams(next))).toBe('unknown_epoch');
    expect(behind.epoch).toBe(1);

    // An application message older than members keep keys for is refused at the relay.
    const old = await alice.group.encryptParams({ wmp: {}, body: 'old' });
    for (let i = 0; i < 5; i++) await alice.commit('update', (g) => g.update());
    await expect(
      alice.request('wmp.message.deliver', { ciphertext: old.ciphertext }, { encrypted: true, epoch: 2 }),
    ).rejects.toMatchObject({ code: -31004, data: { reason: 'epoch_too_old', epoch: 7 } });

    // After all that the group works.
    await waitFor(() => bob.group?.epoch === 7);
    await exchange(bob, [alice], 'still fine');
    await exchange(alice, [bob], 'yes');
    expect(alice.failures).toEqual([]);
    expect(bob.failures).toEqual([]);
  });
});
