// verifyEvent per second on ~2 KB events, against bare node:crypto Ed25519 verify of the same
// signed bytes in the same run. Target: >= 80% of the bare figure.
import { createPublicKey, verify } from 'node:crypto';
import { base58 } from '@scure/base';
import { generateKeypair, utf8 } from '@wmp/jcs-signing';
import { createEvent, generateEncKeypair, idPreimage, type OhanEvent, signedText, verifyEvent } from '@wmp/ohan-seal';
import { type Benchmark, compareRates } from './lib.js';

async function reparse(event: Promise<OhanEvent>): Promise<OhanEvent> {
  return JSON.parse(JSON.stringify(await event)) as OhanEvent;
}

const bench: Benchmark = {
  name: 'ohan-verify',
  async run() {
    const senders = Array.from({ length: 16 }, () => generateKeypair());
    const bob = generateKeypair();
    const enc = generateEncKeypair();
    const events: OhanEvent[] = [];
    for (let i = 0; i < 64; i++) {
      // As a box receives them: parsed from the request body.
      events.push(
        await reparse(
          createEvent({
            envelope: {
              jsonrpc: '2.0',
              id: `m${i}`,
              method: 'wmp.message.deliver',
              params: { wmp: { version: '0.1' }, body: 'x'.repeat(1200) },
            },
            to: { key: bob.multikey, enc: enc.multikey },
            from: senders[i % senders.length]!,
          }),
        ),
      );
    }
    const size = JSON.stringify(events[0]).length;
    // The bare baseline gets everything for free: imported keys, decoded signatures, signed bytes.
    const prepared = events.map((e, i) => ({
      key: createPublicKey({
        key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), senders[i % senders.length]!.publicKey]),
        format: 'der',
        type: 'spki',
      }),
      bytes: utf8(signedText(idPreimage(e), e.id)),
      signature: base58.decode(e.signature.slice(1)),
    }));
    let i = 0;
    let j = 0;
    const r = await compareRates(
      () => {
        if (!verifyEvent(events[i++ % events.length]!).ok) throw new Error('verify failed');
      },
      () => {
        const p = prepared[j++ % prepared.length]!;
        if (!verify(null, p.bytes, p.key, p.signature)) throw new Error('bare verify failed');
      },
      9,
      300,
    );
    return {
      name: 'ohan-verify',
      baseline: { name: 'bare node:crypto Ed25519 verify', value: r.baseline, unit: 'verifies/s' },
      figures: [
        {
          name: `verifyEvent (${size} B events)`,
          value: r.subject,
          unit: 'events/s',
          ratio: r.ratio,
          target: '>= 0.80 of baseline',
          met: r.ratio >= 0.8,
        },
      ],
    };
  },
};

export default bench;
