// Seal + open per second of 1 KB envelopes (no signature: the seal itself), against bare
// node:crypto X25519 (two agreements) + AES-256-GCM (seal and open) of the same size.
import { createCipheriv, createDecipheriv, diffieHellman, generateKeyPairSync, randomBytes } from 'node:crypto';
import { generateKeypair, utf8 } from '@wmp/jcs-signing';
import { generateEncKeypair, openPayload, sealEnvelope } from '@wmp/ohan-seal';
import { type Benchmark, compareRates } from './lib.js';

const bench: Benchmark = {
  name: 'ohan-seal-open',
  async run() {
    const bob = generateKeypair();
    const enc = generateEncKeypair();
    const envelope = utf8(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'wmp.message.deliver',
        params: { wmp: { version: '0.1' }, body: 'x'.repeat(940) },
      }),
    );
    const recipient = { key: bob.multikey, enc: enc.multikey };
    const theirs = generateKeyPairSync('x25519');
    const plaintext = Buffer.alloc(1024, 1);
    const r = await compareRates(
      () => {
        const sealed = sealEnvelope(envelope, recipient);
        openPayload({ to: bob.multikey, ...sealed }, enc.secretKey);
      },
      () => {
        const mine = generateKeyPairSync('x25519');
        const key = diffieHellman({ privateKey: mine.privateKey, publicKey: theirs.publicKey });
        diffieHellman({ privateKey: theirs.privateKey, publicKey: mine.publicKey });
        const nonce = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', key, nonce);
        const ct = Buffer.concat([c.update(plaintext), c.final()]);
        const d = createDecipheriv('aes-256-gcm', key, nonce);
        d.setAuthTag(c.getAuthTag());
        Buffer.concat([d.update(ct), d.final()]);
      },
    );
    return {
      name: 'ohan-seal-open',
      baseline: { name: 'bare node:crypto X25519 x2 + AES-256-GCM seal/open', value: r.baseline, unit: 'ops/s' },
      figures: [
        {
          name: `sealEnvelope + openPayload (${envelope.length} B envelope)`,
          value: r.subject,
          unit: 'ops/s',
          ratio: r.ratio,
        },
      ],
    };
  },
};

export default bench;
