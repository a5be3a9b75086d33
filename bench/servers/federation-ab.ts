// `bench/relay-ab.ts --federation`: A/B of federation builds under relay-federation's load. Each
// checkout (this one first) gets its own pair of relays set up as relay-federation's (A -> relay 1
// -> relay 2 -> B, both SQLite, relay 2 trusting relay 1); this checkout's single SQLite relay
// runs in the same rounds as the reference. Rounds are interleaved; each arm's CPU per message is
// that of its two relays over its own rounds (the other arms are idle then), and its rate is
// judged against the single relay's of the same run, as the relay-federation target is (>= 0.5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test-support/services/index.js';
import { ed25519SignRate } from '../ed25519-rate.js';
import { median } from '../lib.js';
import { type BenchChild, startChild } from './child.js';
import { FEDERATION_LIMITS as LIMITS, FEDERATION_PEER_BUDGETS as PEER_BUDGETS } from './federation-budgets.js';
import { closedLoop, type Fleet, relayFleet } from './routing-load.js';

const ROUND_MS = 1500;
const WARMUP_MS = 800;

interface Arm {
  readonly name: string;
  readonly relays: readonly [BenchChild, BenchChild];
  readonly fleet: Fleet;
  readonly rates: number[];
  /** µs of process CPU of relay 1 and relay 2 over this arm's rounds. */
  readonly cpu: [number, number];
  messages: number;
}

async function startPair(dir: string, i: number, root: string | undefined): Promise<[BenchChild, BenchChild]> {
  const [p1, p2] = [await freePort(), await freePort()];
  const [u1, u2] = [`http://127.0.0.1:${p1}`, `http://127.0.0.1:${p2}`];
  const options = root === undefined ? {} : { root };
  const relay1 = await startChild(
    'relay-server.ts',
    [
      'sqlite',
      join(dir, `relay1-${i}.db`),
      LIMITS,
      JSON.stringify({
        port: p1,
        federation: { peers: [u2], routes: [{ pattern: 'did:key:*', url: u2 }], timings: PEER_BUDGETS },
      }),
    ],
    options,
  );
  const relay2 = await startChild(
    'relay-server.ts',
    [
      'sqlite',
      join(dir, `relay2-${i}.db`),
      LIMITS,
      JSON.stringify({ port: p2, federation: { trustedPeers: [u1], timings: PEER_BUDGETS } }),
    ],
    options,
  );
  return [relay1, relay2];
}

export async function federationAb(trees: readonly string[], rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-federation-ab-'));
  const children: BenchChild[] = [];
  const fleets: Fleet[] = [];
  const arms: Arm[] = [];
  try {
    const single = await startChild('relay-server.ts', ['sqlite', join(dir, 'single.db'), LIMITS]);
    children.push(single);
    const singleFleet = await relayFleet(single.port);
    fleets.push(singleFleet);
    for (const [i, root] of [undefined, ...trees].entries()) {
      const relays = await startPair(dir, i, root);
      children.push(...relays);
      const fleet = await relayFleet(relays[1].port, { senderPort: relays[0].port });
      fleets.push(fleet);
      arms.push({ name: root ?? 'this checkout', relays, fleet, rates: [], cpu: [0, 0], messages: 0 });
    }
    await closedLoop(singleFleet.traffic, WARMUP_MS);
    for (const arm of arms) await closedLoop(arm.fleet.traffic, WARMUP_MS);
    const singleRates: number[] = [];
    const signs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      signs.push(ed25519SignRate());
      singleRates.push(await closedLoop(singleFleet.traffic, ROUND_MS));
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(round + k) % arms.length]!;
        const before = await Promise.all(arm.relays.map((r) => r.ask('stats')));
        const done = arm.fleet.traffic.completed;
        arm.rates.push(await closedLoop(arm.fleet.traffic, ROUND_MS));
        arm.messages += arm.fleet.traffic.completed - done;
        const after = await Promise.all(arm.relays.map((r) => r.ask('stats')));
        for (const j of [0, 1] as const) arm.cpu[j] += after[j]!.cpuMicros! - before[j]!.cpuMicros!;
      }
    }
    const sign = 1e6 / median(signs);
    const reference = median(singleRates);
    console.log(
      `federation, ${rounds} rounds of ${ROUND_MS} ms; Ed25519 sign ${sign.toFixed(1)} µs CPU; ` +
        `single relay (SQLite, this checkout) ${Math.round(reference)} msg/s (rounds ${singleRates.map(Math.round).join(' ')})`,
    );
    const base = arms[0]!;
    const perMessage = (arm: Arm, j: 0 | 1) => arm.cpu[j] / Math.max(1, arm.messages);
    for (const arm of arms) {
      const rate = median(arm.rates);
      const both = perMessage(arm, 0) + perMessage(arm, 1);
      const delta = both - (perMessage(base, 0) + perMessage(base, 1));
      console.log(
        `${arm.name}: ${Math.round(rate)} msg/s (rounds ${arm.rates.map(Math.round).join(' ')}), ` +
          `${(rate / reference).toFixed(2)} of the single relay; CPU per message relay 1 ` +
          `${perMessage(arm, 0).toFixed(0)} µs, relay 2 ${perMessage(arm, 1).toFixed(0)} µs` +
          (arm === base ? '' : ` (both ${delta >= 0 ? '+' : ''}${delta.toFixed(0)} µs against this checkout)`) +
          `; pids ${arm.relays.map((r) => r.process.pid).join(' ')}`,
      );
    }
  } finally {
    for (const f of fleets) f.close();
    for (const c of children) await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
