// Sign + verify of a 1 KB WMP message through @wmp/jcs-signing, against bare canonicalize +
// node:crypto Ed25519 doing the same work. Target: >= 70% of the bare figure.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { generateKeypair, signMessage, verifyMessage } from '@wmp/jcs-signing';
import type { JsonRpcRequest } from '@wmp/jsonrpc-envelope';
import canonicalize from 'canonicalize';
import { type Benchmark, compareRates } from './lib.js';

const keypair = generateKeypair();
const message: JsonRpcRequest = {
  jsonrpc: '2.0',
  id: 'bench-1',
  method: 'wmp.message.deliver',
  params: {
    wmp: { version: '0.1', session_id: 'ses-bench', sender: keypair.did, timestamp: '2026-11-29T12:00:00Z' },
    to: ['did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp'],
    content_type: 'application/json',
    body: { text: 'x'.repeat(760), items: [1, 2, 3], ok: true },
  },
};

const seed = keypair.exportSeed();
const privateKey = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
  format: 'der',
  type: 'pkcs8',
});
const publicKey = createPublicKey(privateKey);
const header = Buffer.from('eyJhbGciOiJFZERTQSIsImI2NCI6ZmFsc2UsImNyaXQiOlsiYjY0Il19.');

function bare(): void {
  const { wmp: _wmp, ...content } = message.params as Record<string, unknown>;
  const input = Buffer.concat([header, Buffer.from(canonicalize(content)!)]);
  const signature = sign(null, input, privateKey);
  const again = Buffer.concat([header, Buffer.from(canonicalize(content)!)]);
  if (!verify(null, again, publicKey, signature)) throw new Error('bare verify failed');
}

async function subject(): Promise<void> {
  const signed = await signMessage(message, keypair);
  if (!(await verifyMessage(signed, { required: true }))) throw new Error('verify failed');
}

const bench: Benchmark = {
  name: 'jcs-sign-verify',
  async run() {
    const size = Buffer.byteLength(JSON.stringify(message));
    const r = await compareRates(subject, bare);
    return {
      name: 'jcs-sign-verify',
      baseline: { name: 'canonicalize + node:crypto sign/verify', value: r.baseline, unit: 'ops/s' },
      figures: [
        {
          name: `signMessage + verifyMessage (${size} B message)`,
          value: r.subject,
          unit: 'ops/s',
          ratio: r.ratio,
          target: '>= 0.70 of baseline',
          met: r.ratio >= 0.7,
        },
      ],
    };
  },
};

export default bench;
