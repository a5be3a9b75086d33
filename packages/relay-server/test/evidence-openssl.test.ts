import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { b64urlDecode } from '@wmp/jcs-signing';
import { TsaClient } from '@wmp/session/timestamp';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collectEvidence,
  EVIDENCE_CAPABILITIES,
  getSigned,
  signedSend,
} from '../../../test-support/evidence-clients.js';
import { startTestTsa, type TestTsa } from '../../../test-support/tsa/tsa-server.js';
import { relayTestbed, waitFor } from './fixtures/relay-clients.js';

// An independent check of an evidence record (wmp-tables §9), with tools that are not ours: the
// record's bytes are made by the `canonicalize` package (RFC 8785), its JWS signature is checked
// by `openssl pkeyutl -verify` with the relay's Ed25519 key as a PEM, and its RFC 3161 token by
// `openssl ts -verify` against the TSA root. Each check is also made to fail on a changed record.

const testbed = relayTestbed();
let tsa: TestTsa;
let dir: string;
beforeAll(async () => {
  tsa = await startTestTsa();
  dir = await mkdtemp(join(tmpdir(), 'wmp-evidence-openssl-'));
});
afterAll(async () => {
  await tsa.close();
  await rm(dir, { recursive: true, force: true });
});

function openssl(args: readonly string[]): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve, reject) => {
    execFile('openssl', [...args], { timeout: 10_000 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Error('openssl is not installed: this test checks evidence records with openssl'));
        return;
      }
      resolve({ ok: error === null, output: `${stdout}${stderr}`.trim() });
    });
  });
}

/** An Ed25519 public key as a PEM SubjectPublicKeyInfo (RFC 8410: the OID 1.3.101.112 prefix). */
function ed25519Pem(key: Uint8Array): string {
  const der = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(key)]);
  return `-----BEGIN PUBLIC KEY-----\n${der.toString('base64')}\n-----END PUBLIC KEY-----\n`;
}

/** openssl's verdicts on a record: its detached JWS (RFC 7797: header '.' JCS(record)) and its token. */
async function opensslVerdicts(record: Record<string, unknown>, signed: string, token: string, key: Uint8Array) {
  const [header, , signature] = signed.split('.');
  const jcs = Buffer.from(canonicalize(record)!, 'utf8');
  const files = {
    key: join(dir, 'relay.pem'),
    input: join(dir, 'signing-input.bin'),
    signature: join(dir, 'signature.bin'),
    record: join(dir, 'record.jcs'),
    token: join(dir, 'token.der'),
    root: join(dir, 'tsa-root.pem'),
  };
  await writeFile(files.key, ed25519Pem(key));
  await writeFile(files.input, Buffer.concat([Buffer.from(`${header}.`, 'ascii'), jcs]));
  await writeFile(files.signature, b64urlDecode(signature!));
  await writeFile(files.record, jcs);
  await writeFile(files.token, b64urlDecode(token));
  await writeFile(files.root, tsa.anchorsPem);
  const jws = await openssl([
    ...['pkeyutl', '-verify', '-pubin', '-inkey', files.key, '-rawin'],
    ...['-in', files.input, '-sigfile', files.signature],
  ]);
  const ts = await openssl([
    ...['ts', '-verify', '-token_in', '-in', files.token],
    ...['-data', files.record, '-CAfile', files.root],
  ]);
  return { jws, ts };
}

describe('evidence records checked with openssl', () => {
  it('openssl verifies the relay signature and the RFC 3161 token of a served record, and refuses a changed one', async () => {
    const client = new TsaClient({ url: tsa.url, anchors: tsa.anchorsPem });
    const url = await testbed.setup({ evidence: { tsa: { url: tsa.url, client } } });
    const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
    const bob = await testbed.open(url);
    expect(alice.session.capabilities.evidence).toMatchObject({ timestamp_authority: tsa.url });
    const notifies = collectEvidence(alice);
    const sent = await signedSend(alice, [bob.keypair.did], { contract: 'C-7' });
    await waitFor(() => notifies.length >= 2);

    // As the repository serves it: the record's fields, its JWS and its token side by side.
    const served = await getSigned(url, alice.keypair, `/evidence?message_id=${sent.message_id}`);
    const { signed_evidence, timestamp_token, ...record } = served.body.evidence_records[0] as Record<string, any>;
    expect(record.event_type).toBe('submission_accepted');
    expect(typeof timestamp_token).toBe('string');
    const key = testbed.relay!.core.identity.publicKey;

    const good = await opensslVerdicts(record, signed_evidence, timestamp_token, key);
    expect(good.jws.output).toContain('Signature Verified Successfully');
    expect(good.jws.ok).toBe(true);
    expect(good.ts.output).toContain('Verification: OK');
    expect(good.ts.ok).toBe(true);

    const changed = await opensslVerdicts(
      { ...record, original_recipient: 'did:key:z6MkMallory' },
      signed_evidence,
      timestamp_token,
      key,
    );
    expect(changed.jws.ok).toBe(false);
    expect(changed.ts.ok).toBe(false);
    // Another relay's key does not verify it either.
    const other = await opensslVerdicts(record, signed_evidence, timestamp_token, new Uint8Array(32).fill(7));
    expect(other.jws.ok).toBe(false);
  });

  it('a TSA that fails leaves the token out (counted), the record still signed', async () => {
    const client = new TsaClient({ url: tsa.url, anchors: tsa.anchorsPem });
    const url = await testbed.setup({ evidence: { tsa: { url: tsa.url, client } } });
    tsa.behave({ httpStatus: 503 });
    try {
      const alice = await testbed.open(url, { capabilities: EVIDENCE_CAPABILITIES });
      const bob = await testbed.open(url);
      const notifies = collectEvidence(alice);
      await signedSend(alice, [bob.keypair.did], 'no token');
      await waitFor(() => notifies.length >= 1);
      expect(notifies[0]!.timestamp_token).toBeUndefined();
      expect(typeof notifies[0]!.signed_evidence).toBe('string');
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toMatch(/^wmp_relay_evidence_tsa_failures_total [1-9]/m);
      expect(metrics).toMatch(/^wmp_relay_evidence_records_total\{event="submission_accepted"\} 1$/m);
    } finally {
      tsa.behave({});
    }
  });
});
