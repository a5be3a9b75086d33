// The machine's Ed25519 sign rate, measured in the run of the bench that reports it: the relay's
// CPU per message is judged in this machine's signs (bench/README.md), since machines here differ
// by 2.5x. Signs on one core with the relay's own signer (node:crypto,
// key imported once) over an input of a relay_chain entry's size.
import { generateKeypair } from '@wmp/jcs-signing';
import type { Figure } from './lib.js';

/** About what a relay signs per hop: `<b64url JWS header>.` and the JCS of the hop payload. */
const INPUT = new TextEncoder().encode(`${'h'.repeat(190)}.${'p'.repeat(210)}`);
const keypair = generateKeypair();

/**
 * Signs per CPU second over about `ms` milliseconds: CPU time (user + system of this process), so
 * that a machine shared with other jobs shows what a sign costs, as the relay's CPU per message
 * does, and not how much of a core this process got meanwhile.
 */
export function ed25519SignRate(ms = 250): number {
  for (let i = 0; i < 50; i++) keypair.sign(INPUT);
  let n = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() - start < ms) {
    for (let i = 0; i < 20; i++) keypair.sign(INPUT);
    n += 20;
  }
  const used = process.cpuUsage(cpu);
  return (n * 1e6) / (used.user + used.system);
}

/** The rate as figures: signs/s and µs per sign. */
export function signRateFigures(rate: number): Figure[] {
  return [
    { name: 'Ed25519 signs per CPU second (this machine, this run)', value: rate, unit: 'signs/s' },
    { name: 'Ed25519 sign, CPU time (this machine, this run)', value: 1e6 / rate, unit: 'µs' },
  ];
}

/**
 * CPU per message in Ed25519 signs of the same run; the single relay's target is <= 3 (`target:
 * undefined` for a figure reported without one).
 */
export function cpuInSignsFigure(
  cpuMicrosPerMessage: number,
  rate: number,
  options: { name?: string; target?: number | undefined } = {},
): Figure {
  const signs = cpuMicrosPerMessage / (1e6 / rate);
  const target = 'target' in options ? options.target : 3;
  return {
    name: options.name ?? 'relay CPU per message / Ed25519 sign (same run)',
    value: signs,
    unit: 'signs',
    ...(target === undefined ? {} : { target: `<= ${target}`, met: signs <= target }),
  };
}
