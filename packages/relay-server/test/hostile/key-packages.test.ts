// Issue 12, items 6 and 10: key packages. Fresh identities cannot drain a victim's packages (the
// budget is the target's, and its last-resort package is handed out instead, never consumed);
// a publish verifies a bounded number of packages and is charged per package, so a flood of
// publishes is refused before any signature is checked.
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { MlsClient } from '@wmp/mls-bridge';
import { describe, expect, it } from 'vitest';
import { hostileTestbed, type Login, must, RawSocket, type RpcAnswer } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();

async function keyPackages(keypair: Keypair, n: number) {
  const mls = await MlsClient.create({ identity: keypair });
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const kp = await mls.createKeyPackage();
    out.push({ key_package: kp.keyPackage, cipher_suite: kp.cipherSuite, expires: kp.expires });
  }
  return out;
}

const publish = (s: RawSocket, l: Login, key_packages: unknown[]) =>
  s.call('ohan.mls.keypackage.publish', { wmp: l.wmp, key_packages });
const take = (s: RawSocket, l: Login, identity: string) =>
  s.call('ohan.mls.keypackage.fetch', { wmp: l.wmp, identity });
/** Base64url that is no key package: verifying it fails (-31004). */
const BAD = { key_package: 'AAAAAAAAAAAA', cipher_suite: 1 };

describe('key packages (issue 12 items 6 and 10)', { timeout: 60_000 }, () => {
  it('four fresh identities cannot take all of a victim’s packages; the last-resort one is handed out, never consumed', async () => {
    const bed = await testbed.setup({ limits: { keyPackageFetchesPerTarget: 6 } });
    const vs = await RawSocket.open(bed.url);
    const victim = await vs.login();
    const [lastResort, ...regular] = await keyPackages(victim.keypair, 13);
    expect(must(await publish(vs, victim, regular)).accepted).toBe(12);
    expect(must(await publish(vs, victim, [{ ...lastResort, last_resort: true }])).accepted).toBe(1);

    const handed: string[] = [];
    for (let i = 0; i < 4; i++) {
      const s = await RawSocket.open(bed.url);
      const l = await s.login();
      for (let n = 0; n < 4; n++) handed.push(must(await take(s, l, victim.did)).key_package);
      await s.close();
    }
    const fresh = handed.filter((k) => k !== lastResort!.key_package);
    expect(fresh).toHaveLength(6);
    expect(new Set(fresh).size).toBe(6);
    expect(handed.filter((k) => k === lastResort!.key_package)).toHaveLength(10);
    // Six of the victim's packages are left for its own use, and the last-resort one is still there.
    expect(await bed.relay.stores.keyPackages.count(victim.did, Date.now())).toBe(6);
    const late = await RawSocket.open(bed.url);
    expect(must(await take(late, await late.login(), victim.did)).key_package).toBe(lastResort!.key_package);
    await bed.checkHealthy();
  });

  it('verifies at most maxKeyPackagesPerPublish per call, the rest of the call unread', async () => {
    const bed = await testbed.setup({ limits: { maxKeyPackagesPerPublish: 4 } });
    const s = await RawSocket.open(bed.url);
    const l = await s.login();
    const good = await keyPackages(l.keypair, 6);
    // A bad package past the bound is never looked at; one within it refuses the call.
    expect(must(await publish(s, l, [...good, BAD, BAD]))).toMatchObject({ accepted: 4 });
    expect((await publish(s, l, [good[4]!, BAD])).error).toMatchObject({ code: -31004, data: { index: 1 } });
    expect(await bed.relay.stores.keyPackages.count(l.did, Date.now())).toBe(4);
    await bed.checkHealthy();
  });

  it('charges a publish per package: a flood of publishes is refused before anything is verified', async () => {
    const bed = await testbed.setup(
      { limits: { requestsPerSecond: 1, requestBurst: 10, maxKeyPackagesPerPublish: 4 } },
      { frozenClock: true },
    );
    const s = await RawSocket.open(bed.url);
    const l = await s.login();
    // Every publish carries a bad package: if it is verified, the answer is -31004.
    const answers: RpcAnswer[] = [];
    for (let i = 0; i < 20; i++) answers.push(await publish(s, l, [BAD, BAD, BAD, BAD]));
    const verified = answers.filter((a) => a.error?.code === -31004).length;
    const refused = answers.filter((a) => a.error?.code === -31007);
    // Four requests' worth each: two fit in the burst of 10; everything after is refused unverified.
    expect(verified).toBe(2);
    expect(refused).toHaveLength(18);
    for (const a of refused) expect(a.error).toMatchObject({ data: { reason: 'request rate' } });
    // Another identity is not affected.
    const other = await RawSocket.open(bed.url);
    const o = await other.login(generateKeypair());
    expect((await publish(other, o, [BAD])).error?.code).toBe(-31004);
    await bed.checkHealthy();
  });
});
