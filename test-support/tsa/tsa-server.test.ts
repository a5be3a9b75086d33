import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { b64urlDecode } from '@wmp/jcs-signing';
import { TsaClient } from '@wmp/session/timestamp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestTsa, type TestTsa } from './tsa-server.js';

// The test TSA, checked by a tool that is not ours: `openssl ts -verify` takes the token it hands
// out over HTTP (obtained with our TsaClient) and checks the CMS signature, the ESS
// signing-certificate attribute, the TSA certificate's critical timeStamping key purpose and its
// chain to the TSA root, and that the imprint is the SHA-256 of the content it reads itself.

interface OpensslVerdict {
  readonly ok: boolean;
  readonly output: string;
}

async function opensslTsVerify(token: Uint8Array, content: Uint8Array, tsa: TestTsa): Promise<OpensslVerdict> {
  const dir = await mkdtemp(join(tmpdir(), 'wmp-tsa-'));
  try {
    await writeFile(join(dir, 'token.der'), token);
    await writeFile(join(dir, 'content.bin'), content);
    await writeFile(join(dir, 'root.pem'), tsa.anchorsPem);
    const args = ['ts', '-verify', '-token_in', '-in', join(dir, 'token.der'), '-data', join(dir, 'content.bin')];
    args.push('-CAfile', join(dir, 'root.pem'));
    return await new Promise<OpensslVerdict>((resolve, reject) => {
      execFile('openssl', args, { timeout: 10_000 }, (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new Error('openssl is not installed: this test checks our tokens with `openssl ts -verify`'));
          return;
        }
        resolve({ ok: error === null && /Verification: OK/.test(stdout), output: `${stdout}${stderr}`.trim() });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('test TSA (RFC 3161 over HTTP)', () => {
  let tsa: TestTsa;
  beforeAll(async () => {
    tsa = await startTestTsa();
  });
  afterAll(() => tsa.close());

  const content = new TextEncoder().encode('{"body":{"invoice":"INV-1"},"content_type":"application/json"}');

  it('hands out a token over HTTP that openssl ts -verify accepts for the content', async () => {
    tsa.behave({});
    const client = new TsaClient({ url: tsa.url, anchors: tsa.anchorsPem });
    const obtained = await client.timestamp(content);
    expect(Math.abs(obtained.genTime - Date.now())).toBeLessThan(60_000);
    const verdict = await opensslTsVerify(b64urlDecode(obtained.token), content, tsa);
    expect(verdict.output).toContain('Verification: OK');
    expect(verdict.ok).toBe(true);
    // And openssl refuses the same token for other content: the check can fail.
    const other = await opensslTsVerify(b64urlDecode(obtained.token), new TextEncoder().encode('other'), tsa);
    expect(other.ok).toBe(false);
  });

  it('openssl refuses the tokens the TSA makes wrong on purpose', async () => {
    const imprint = new Uint8Array(await crypto.subtle.digest('SHA-256', content));
    const cases = [
      { certificate: 'wrong_eku' },
      { certificate: 'untrusted' },
      { fault: 'bad_signature' },
      { fault: 'wrong_imprint' },
      { fault: 'no_signing_certificate' },
    ] as const;
    for (const behaviour of cases) {
      tsa.behave(behaviour);
      const verdict = await opensslTsVerify(await tsa.tokenFor(imprint), content, tsa);
      expect(verdict.ok, JSON.stringify(behaviour)).toBe(false);
    }
    tsa.behave({});
    expect((await opensslTsVerify(await tsa.tokenFor(imprint), content, tsa)).ok).toBe(true);
  });

  it('answers only application/timestamp-query POSTs', async () => {
    const before = tsa.requests;
    const get = await fetch(tsa.url);
    expect(get.status).toBe(400);
    const wrongType = await fetch(tsa.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(wrongType.status).toBe(400);
    expect(tsa.requests).toBe(before + 2);
  });
});
