// `openssl verify` as a second opinion on a chain: an independent RFC 5280 implementation run on
// the very certificates our verifier judged, so that a test can check that both agree.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestCert } from './pki.js';

/** `sslclient` for a sender's certificate (clientAuth), `sslserver` for a relay's (serverAuth). */
export type OpensslPurpose = 'sslclient' | 'sslserver';

export interface OpensslVerdict {
  readonly ok: boolean;
  /** What openssl printed (its reason when it refuses). */
  readonly output: string;
}

/** Runs `openssl verify -purpose <purpose>` on `chain` (leaf first) against `anchors` only. */
export async function opensslVerify(
  chain: readonly TestCert[],
  anchors: readonly TestCert[],
  purpose: OpensslPurpose,
): Promise<OpensslVerdict> {
  const dir = await mkdtemp(join(tmpdir(), 'wmp-openssl-'));
  try {
    const [leaf, ...intermediates] = chain;
    if (!leaf) throw new Error('an empty chain');
    await writeFile(join(dir, 'leaf.pem'), leaf.pem);
    await writeFile(join(dir, 'anchors.pem'), anchors.map((a) => a.pem).join(''));
    const args = ['verify', '-no-CApath', '-no-CAstore', '-purpose', purpose, '-CAfile', join(dir, 'anchors.pem')];
    if (intermediates.length > 0) {
      await writeFile(join(dir, 'untrusted.pem'), intermediates.map((c) => c.pem).join(''));
      args.push('-untrusted', join(dir, 'untrusted.pem'));
    }
    args.push(join(dir, 'leaf.pem'));
    return await new Promise<OpensslVerdict>((resolve, reject) => {
      execFile('openssl', args, { timeout: 10_000 }, (error, stdout, stderr) => {
        // A missing binary is the test machine's problem, not a verdict.
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new Error('openssl is not installed: these tests compare our verdicts with `openssl verify`'));
          return;
        }
        resolve({ ok: error === null, output: `${stdout}${stderr}`.trim() });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
