// Median time to mint an 18-bit stamp on one core over >= 20 runs. Target: <= 0.5 s.
// Baseline: bare node:crypto SHA-256 of a 52-byte input per try (what one try costs at best),
// reported as the expected time for 2^18 tries.
import { createHash } from 'node:crypto';
import { generateKeypair } from '@wmp/jcs-signing';
import { createEvent, generateEncKeypair, mintStamp, unsignedPart } from '@wmp/ohan-seal';
import { type Benchmark, median, percentile, rate } from './lib.js';

const BITS = 18;
const RUNS = 24;

const bench: Benchmark = {
  name: 'stamp-mint',
  async run() {
    const alice = generateKeypair();
    const bob = generateKeypair();
    const enc = generateEncKeypair();
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const event = unsignedPart(
        await createEvent({
          envelope: {
            jsonrpc: '2.0',
            method: 'wmp.message.deliver',
            params: { wmp: { version: '0.1' }, body: `m${i}` },
          },
          to: { key: bob.multikey, enc: enc.multikey },
          from: alice,
        }),
      );
      const start = performance.now();
      await mintStamp(event, BITS);
      times.push((performance.now() - start) / 1000);
    }
    const input = Buffer.alloc(52, 7);
    const hashRate = await rate(() => createHash('sha256').update(input).digest(), 500);
    const bareSeconds = 2 ** BITS / hashRate;
    const med = median(times);
    return {
      name: 'stamp-mint',
      baseline: { name: 'bare SHA-256 rate (node:crypto, 52 B)', value: hashRate, unit: 'hashes/s' },
      figures: [
        { name: `median time, ${BITS} bits, ${RUNS} runs`, value: med, unit: 's', target: '<= 0.5 s', met: med <= 0.5 },
        { name: 'p90 time', value: percentile(times, 90), unit: 's' },
        { name: 'expected time at the bare hash rate (2^18 tries)', value: bareSeconds, unit: 's' },
      ],
    };
  },
};

export default bench;
