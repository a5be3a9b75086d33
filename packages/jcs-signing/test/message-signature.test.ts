import { type JsonRpcMessage, type JsonRpcRequest, parseSingleMessage } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import { generateKeypair, signMessage, utf8, verifyMessage } from '../src/index.js';

const alice = generateKeypair();
const mallory = generateKeypair();

const deliver: JsonRpcRequest = {
  jsonrpc: '2.0',
  id: 'm1',
  method: 'wmp.message.deliver',
  params: {
    wmp: { version: '0.1', session_id: 'ses-abc', sender: alice.did },
    to: ['did:key:bob'],
    content_type: 'text/plain',
    body: { text: 'pay 10 EUR to Bob, héllo', n: 42, ok: true },
  },
};

async function verdict(message: JsonRpcMessage): Promise<string> {
  try {
    await verifyMessage(message, { required: true });
    return 'ok';
  } catch (e) {
    return String((e as { data?: { reason?: string } }).data?.reason ?? e);
  }
}

describe('non-repudiation signatures (core §5.4)', () => {
  it('signs a request into params.wmp.signature and verifies it', async () => {
    const signed = await signMessage(deliver, alice);
    const wmp = (signed.params as { wmp: { signature: string } }).wmp;
    expect(wmp.signature).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
    await expect(verifyMessage(signed)).resolves.toMatchObject({ kid: alice.kid, publicKey: alice.publicKey });
    // Re-signing replaces the old signature instead of covering it.
    await expect(verifyMessage(await signMessage(signed, alice))).resolves.toBeDefined();
  });

  it('signs success and error responses', async () => {
    const ok = await signMessage({ jsonrpc: '2.0', id: 1, result: { wmp: { version: '0.1' }, resumed: true } }, alice);
    await expect(verifyMessage(ok, { signer: alice.did })).resolves.toBeDefined();
    const err = await signMessage({ jsonrpc: '2.0', id: 1, error: { code: -31014, message: 'Queue full' } }, alice);
    await expect(verifyMessage(err, { signer: alice.did })).resolves.toBeDefined();
    const errData = await signMessage(
      { jsonrpc: '2.0', id: 1, error: { code: -31006, message: 'Flow error', data: { reason: 'x' } } },
      alice,
    );
    await expect(verifyMessage(errData, { signer: alice.did })).resolves.toBeDefined();
  });

  it('refuses a signature by someone other than wmp.sender (sender binding)', async () => {
    const forged = await signMessage(deliver, mallory);
    expect(await verdict(forged)).toBe('signer_mismatch');
  });

  it('treats an unsigned message as unsigned, or refuses it when a signature is required', async () => {
    await expect(verifyMessage(deliver)).resolves.toBeUndefined();
    expect(await verdict(deliver)).toBe('missing');
  });

  it('fails when any bit of the signed content, the signature or the sender flips', async () => {
    // core §5.4 signs params minus `wmp`: every byte of that, of the signature and of the sender
    // must matter. (The rest of `wmp`, method and id are routing data outside the signature.)
    const signed = await signMessage(deliver, alice);
    const { wmp, ...content } = signed.params as Record<string, unknown> & { wmp: Record<string, string> };
    const head = '{"jsonrpc":"2.0","id":"m1","method":"wmp.message.deliver","params":';
    const contentText = JSON.stringify(content).slice(0, -1);
    const wmpText = JSON.stringify(wmp);
    const text = `${head}${contentText},"wmp":${wmpText}}}`;
    const bytes = utf8(text);
    const prefix = utf8(head).length;
    const regions: Array<[number, number]> = [[prefix, prefix + utf8(contentText).length]];
    const wmpStart = bytes.length - 2 - utf8(wmpText).length;
    // The values of wmp.signature and wmp.sender (renaming the `sender` key instead drops the claim
    // of a sender, which leaves a valid signature by a key that claims nothing).
    for (const field of [`"signature":"${wmp.signature}"`, `"sender":"${wmp.sender}"`]) {
      const at = wmpText.indexOf(field) + field.indexOf(':"') + 2;
      const end = at + field.length - field.indexOf(':"') - 3;
      regions.push([wmpStart + utf8(wmpText.slice(0, at)).length, wmpStart + utf8(wmpText.slice(0, end)).length]);
    }
    expect(await verdict(parseSingleMessage(bytes))).toBe('ok');
    let flips = 0;
    for (const [from, to] of regions) {
      for (let i = from; i < to; i++) {
        for (let bit = 0; bit < 8; bit++) {
          const mutated = bytes.slice();
          mutated[i]! ^= 1 << bit;
          let message: JsonRpcMessage;
          try {
            message = parseSingleMessage(mutated);
          } catch {
            continue; // no longer a message at all: refused before verification
          }
          flips++;
          expect(await verdict(message), `byte ${i} bit ${bit}`).not.toBe('ok');
        }
      }
    }
    expect(flips).toBeGreaterThan(500);
  });
});
