import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { MlsClient } from '@wmp/mls-bridge';
import { describe, expect, it, vi } from 'vitest';
import { MemoryKeyPackageBudgets } from '../src/coordination/memory/key-package-budgets.js';
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
  it('limits what all others together take of one identity per hour; then its last-resort package is handed out', async () => {
    let clock = Date.now();
    const url = await testbed.setup({ now: () => clock, limits: { keyPackageFetchesPerTarget: 4 } });
    const count = (c: Client) => testbed.relay!.stores.keyPackages.count(c.keypair.did, clock);
    const alice = await testbed.open(url, { register: false });
    const kps = await keyPackages(alice.keypair, 7);
    expect(await publish(alice, kps)).toMatchObject({ accepted: 7 });

    // Fresh identities, each asking for a few: the budget is Alice's, not theirs, so they take 4 together.
    const strangers = await Promise.all(Array.from({ length: 3 }, () => testbed.open(url, { register: false })));
    const taken: string[] = [];
    for (const m of strangers) {
      for (let i = 0; i < 2; i++) {
        const r = await refusal(fetchFor(m, alice.keypair.did));
        if (r === 'accepted') taken.push('ok');
        else expect(r).toEqual(BUDGET_REFUSAL);
      }
    }
    expect(taken).toHaveLength(4);
    expect(await count(alice)).toBe(3);

    // With a last-resort package published, others still get one (the same, never consumed).
    const [last] = await keyPackages(alice.keypair, 1);
    expect(await publish(alice, [{ ...last, last_resort: true }])).toMatchObject({ accepted: 1 });
    for (const m of strangers) {
      await expect(fetchFor(m, alice.keypair.did)).resolves.toMatchObject({ key_package: last!.key_package });
    }
    expect(await count(alice)).toBe(3);
    // Alice taking her own is not limited, and leaves her last resort in place.
    for (const kp of kps.slice(4)) {
      await expect(fetchFor(alice, alice.keypair.did)).resolves.toMatchObject({ key_package: kp.key_package });
    }
    await expect(fetchFor(alice, alice.keypair.did)).resolves.toMatchObject({ key_package: last!.key_package });

    // A new window after the hour: regular ones are handed out again once there are some.
    const more = await keyPackages(alice.keypair, 2);
    expect(await publish(alice, more)).toMatchObject({ accepted: 2 });
    await expect(fetchFor(strangers[0]!, alice.keypair.did)).resolves.toMatchObject({ key_package: last!.key_package });
    clock += HOUR;
    vi.useFakeTimers({ toFake: ['Date'], now: clock });
    let fresh: Client;
    try {
      fresh = await testbed.open(url, { register: false });
    } finally {
      vi.useRealTimers();
    }
    await expect(fetchFor(fresh, alice.keypair.did)).resolves.toMatchObject({ key_package: more[0]!.key_package });
  });

  it('counts only what was taken: misses are free, concurrent fetches cannot pass the budget together', async () => {
    const url = await testbed.setup({ limits: { keyPackageFetchesPerTarget: 2 } });
    const carol = await testbed.open(url, { register: false });
    const mallory = await testbed.open(url, { register: false });
    const eve = await testbed.open(url, { register: false });
    // Carol has none yet: every fetch is -31008, and none of them uses her budget.
    for (let i = 0; i < 4; i++) expect(await codeOf(fetchFor(mallory, carol.keypair.did))).toBe(-31008);
    expect(await publish(carol, await keyPackages(carol.keypair, 5))).toMatchObject({ accepted: 5 });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => refusal(fetchFor(i % 2 ? mallory : eve, carol.keypair.did))),
    );
    expect(results.filter((r) => r === 'accepted')).toHaveLength(2);
    expect(results.filter((r) => r !== 'accepted')).toEqual(Array(4).fill(BUDGET_REFUSAL));
    expect(await testbed.relay!.stores.keyPackages.count(carol.keypair.did, Date.now())).toBe(3);
    // The relay keeps serving everyone.
    await expect(fetchFor(carol, carol.keypair.did)).resolves.toMatchObject({ key_package: expect.any(String) });
  });

  it('verifies a bounded number per publish, charges the request budget per package, refuses cheaply', async () => {
    // Made before the session, so that the calls below follow each other within a token's refill.
    const daveKeys = generateKeypair();
    const kps = await keyPackages(daveKeys, 10);
    const url = await testbed.setup({ limits: { maxKeyPackagesPerPublish: 4, requestBurst: 8, requestsPerSecond: 1 } });
    const dave = await testbed.open(url, { register: false, keypair: daveKeys });
    // Six offered, four considered (and charged): the rest is never verified nor stored.
    expect(await publish(dave, kps)).toMatchObject({ accepted: 4 });
    expect(await testbed.relay!.stores.keyPackages.count(dave.keypair.did, Date.now())).toBe(4);
    // A bad package among the considered ones refuses the call and stores nothing ...
    const bad = [kps[4]!, { ...kps[5]!, key_package: kps[5]!.key_package.slice(0, -8) }];
    expect(await codeOf(publish(dave, bad))).toBe(-31004);
    // ... and what is charged adds up: authenticate 1, publish 4, publish 2 of a burst of 8.
    expect(await testbed.relay!.stores.keyPackages.count(dave.keypair.did, Date.now())).toBe(4);
    expect(await refusal(publish(dave, kps.slice(6, 10)))).toEqual({
      code: -31007,
      data: { reason: 'request rate' },
    });
  });

  it('refuses a budget that is not a positive integer at construction', async () => {
    for (const bad of [0, -1, 1.5]) {
      await expect(testbed.setup({ limits: { keyPackageFetchesPerTarget: bad } })).rejects.toThrow(
        'limits.keyPackageFetchesPerTarget must be a positive integer',
      );
    }
  });
});

// The window rules (per target, refunds, one window per node) are the coordination suites'; what
// only memory has is its bound on targets.
describe('MemoryKeyPackageBudgets (fake clock)', () => {
  it('keeps at most maxTargets targets: expired windows go first, then the oldest', async () => {
    let clock = 0;
    const budget = new MemoryKeyPackageBudgets({ perTarget: 1, now: () => clock, windowMs: 100, maxTargets: 3 });
    const reserve = (caller: string, target: string) => budget.reserve(caller, target);
    expect(await reserve('m', 'a')).toBeDefined();
    clock = 50;
    expect(await reserve('m', 'b')).toBeDefined();
    expect(await reserve('m', 'c')).toBeDefined();
    expect(budget.size).toBe(3);
    // Full, nothing expired: the oldest target (a) is dropped, so it starts afresh.
    expect(await reserve('m', 'd')).toBeDefined();
    expect(budget.size).toBe(3);
    expect(await reserve('m', 'b')).toBeUndefined();
    expect(await reserve('m', 'a')).toBeDefined(); // evicted b
    expect(budget.size).toBe(3);
    // Once windows expire they are pruned on the next new target, not only the single oldest one.
    clock = 1_000;
    expect(await reserve('x', 'y')).toBeDefined();
    expect(budget.size).toBe(1);
  });
});
