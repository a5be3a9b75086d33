import type { Keypair } from '@wmp/jcs-signing';
import { MlsClient } from '@wmp/mls-bridge';
import { describe, expect, it, vi } from 'vitest';
import { KEY_PACKAGE_FETCH_WINDOW_MS, KeyPackageBudget } from '../src/relay/key-package-budget.js';
import { type Client, codeOf, relayTestbed } from './fixtures/relay-clients.js';

const testbed = relayTestbed();
const HOUR = 3600 * 1000;

async function keyPackages(keypair: Keypair, n: number) {
  const mls = await MlsClient.create({ identity: keypair });
  const out = [];
  for (let i = 0; i < n; i++) {
    const kp = await mls.createKeyPackage();
    out.push({ key_package: kp.keyPackage, cipher_suite: kp.cipherSuite, expires: kp.expires });
  }
  return out;
}

const publish = (c: Client, key_packages: unknown[]) =>
  c.session.request('ohan.mls.keypackage.publish', { key_packages }) as Promise<{ accepted: number }>;
const fetchFor = (c: Client, identity: string) =>
  c.session.request('ohan.mls.keypackage.fetch', { identity }) as Promise<{ key_package: string }>;

/** What a call was refused with: code and data. */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'accepted';
  } catch (e) {
    const { code, data } = e as { code?: number; data?: unknown };
    return { code, data };
  }
}

const BUDGET_REFUSAL = { code: -31007, data: { reason: 'key package budget' } };

describe('key package budget at the relay (ohan.mls.keypackage.fetch)', () => {
  it('lets one caller take a few of another identity per hour, refuses more and takes nothing then', async () => {
    let clock = Date.now();
    const url = await testbed.setup({ now: () => clock });
    const count = (c: Client) => testbed.relay!.stores.keyPackages.count(c.keypair.did, clock);
    const alice = await testbed.open(url, { register: false });
    const mallory = await testbed.open(url, { register: false });
    const bob = await testbed.open(url, { register: false });
    const kps = await keyPackages(alice.keypair, 10);
    expect(await publish(alice, kps)).toMatchObject({ accepted: 10 });

    // Mallory takes the default budget of 3, oldest first; the fourth is refused and Alice keeps hers.
    for (const kp of kps.slice(0, 3)) {
      await expect(fetchFor(mallory, alice.keypair.did)).resolves.toMatchObject({ key_package: kp.key_package });
    }
    expect(await count(alice)).toBe(7);
    expect(await refusal(fetchFor(mallory, alice.keypair.did))).toEqual(BUDGET_REFUSAL);
    expect(await refusal(fetchFor(mallory, alice.keypair.did))).toEqual(BUDGET_REFUSAL);
    expect(await count(alice)).toBe(7);

    // Bob has his own budget; Alice taking her own is not limited.
    await expect(fetchFor(bob, alice.keypair.did)).resolves.toMatchObject({ key_package: kps[3]!.key_package });
    for (const kp of kps.slice(4, 8)) {
      await expect(fetchFor(alice, alice.keypair.did)).resolves.toMatchObject({ key_package: kp.key_package });
    }
    expect(await count(alice)).toBe(2);

    // Still refused just before the hour is over, served again once it is.
    clock += HOUR - 1;
    expect(await refusal(fetchFor(mallory, alice.keypair.did))).toEqual(BUDGET_REFUSAL);
    clock += 1;
    // Her session of an hour has expired meanwhile: she opens a new one with the same key, its
    // signed timestamp taken from the relay's clock (only the client's Date is faked).
    vi.useFakeTimers({ toFake: ['Date'], now: clock });
    let malloryAgain: Client;
    try {
      malloryAgain = await testbed.open(url, { keypair: mallory.keypair, register: false });
    } finally {
      vi.useRealTimers();
    }
    await expect(fetchFor(malloryAgain, alice.keypair.did)).resolves.toMatchObject({
      key_package: kps[8]!.key_package,
    });
    expect(await count(alice)).toBe(1);
  });

  it('counts only what was taken: misses are free, concurrent fetches cannot pass the budget together', async () => {
    const url = await testbed.setup({ limits: { keyPackageFetchesPerTarget: 2 } });
    const carol = await testbed.open(url, { register: false });
    const mallory = await testbed.open(url, { register: false });
    // Carol has none yet: every fetch is -31008, and none of them uses Mallory's budget.
    for (let i = 0; i < 4; i++) expect(await codeOf(fetchFor(mallory, carol.keypair.did))).toBe(-31008);
    expect(await publish(carol, await keyPackages(carol.keypair, 5))).toMatchObject({ accepted: 5 });
    const results = await Promise.all(Array.from({ length: 5 }, () => refusal(fetchFor(mallory, carol.keypair.did))));
    expect(results.filter((r) => r === 'accepted')).toHaveLength(2);
    expect(results.filter((r) => r !== 'accepted')).toEqual([BUDGET_REFUSAL, BUDGET_REFUSAL, BUDGET_REFUSAL]);
    expect(await testbed.relay!.stores.keyPackages.count(carol.keypair.did, Date.now())).toBe(3);
    // The relay keeps serving everyone.
    await expect(fetchFor(carol, carol.keypair.did)).resolves.toMatchObject({ key_package: expect.any(String) });
  });

  it('refuses a budget that is not a positive integer at construction', async () => {
    for (const bad of [0, -1, 1.5]) {
      await expect(testbed.setup({ limits: { keyPackageFetchesPerTarget: bad } })).rejects.toThrow(
        'limits.keyPackageFetchesPerTarget must be a positive integer',
      );
    }
  });
});

describe('KeyPackageBudget (fake clock)', () => {
  it('allows perTarget per (caller, target) in a window that begins at the first fetch', () => {
    let clock = 1_000;
    const budget = new KeyPackageBudget(2, () => clock);
    budget.reserve('m', 'a');
    clock += 10;
    budget.reserve('m', 'a');
    expect(() => budget.reserve('m', 'a')).toThrow(expect.objectContaining(BUDGET_REFUSAL));
    // Other pairs are separate, and one's own identity is never counted.
    budget.reserve('m', 'b');
    budget.reserve('b', 'a');
    for (let i = 0; i < 10; i++) budget.reserve('a', 'a');
    clock = 1_000 + KEY_PACKAGE_FETCH_WINDOW_MS - 1;
    expect(() => budget.reserve('m', 'a')).toThrow(expect.objectContaining(BUDGET_REFUSAL));
    clock += 1;
    budget.reserve('m', 'a');
    budget.reserve('m', 'a');
    expect(() => budget.reserve('m', 'a')).toThrow(expect.objectContaining(BUDGET_REFUSAL));
  });

  it('gives a refunded fetch back once, and forgets a pair that used nothing', () => {
    const budget = new KeyPackageBudget(1, () => 0);
    const refund = budget.reserve('m', 'a');
    expect(() => budget.reserve('m', 'a')).toThrow(expect.objectContaining(BUDGET_REFUSAL));
    refund();
    refund(); // a second call gives nothing more back
    expect(budget.size).toBe(0);
    budget.reserve('m', 'a');
    expect(() => budget.reserve('m', 'a')).toThrow(expect.objectContaining(BUDGET_REFUSAL));
  });

  it('keeps at most maxPairs pairs: expired windows go first, then the oldest', () => {
    let clock = 0;
    const budget = new KeyPackageBudget(1, () => clock, { windowMs: 100, maxPairs: 3 });
    budget.reserve('m', 'a');
    clock = 50;
    budget.reserve('m', 'b');
    budget.reserve('m', 'c');
    expect(budget.size).toBe(3);
    // Full, nothing expired: the oldest pair (m, a) is dropped, so it starts afresh.
    budget.reserve('m', 'd');
    expect(budget.size).toBe(3);
    expect(() => budget.reserve('m', 'b')).toThrow(expect.objectContaining(BUDGET_REFUSAL));
    budget.reserve('m', 'a'); // evicted (m, b)
    expect(budget.size).toBe(3);
    // Once windows expire they are pruned on the next new pair, not only the single oldest one.
    clock = 1_000;
    budget.reserve('x', 'y');
    expect(budget.size).toBe(1);
  });
});
