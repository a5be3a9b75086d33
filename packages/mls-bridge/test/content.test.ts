import { b64urlDecode, generateKeypair } from '@wmp/jcs-signing';
import { MlsError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import type { MlsGroup } from '../src/index.js';
import { expectRefused, groupOf, te } from './harness.js';

function deliverParams(sender: string, body: unknown) {
  return {
    wmp: { version: '0.1', session_id: 'ses-4f9a2c7d', sender, timestamp: '2026-11-29T12:00:00Z' },
    to: ['did:example:bob'],
    content_type: 'application/json',
    body,
  };
}

describe('WMP content encryption (core §5.2)', () => {
  it('round-trips params: routing fields in the clear, the body only inside the ciphertext', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const body = { invoice: 'INV-1001', amount: '42.00', note: 'héllo ✓', items: [1, 2.5, null, true] };
    const params = deliverParams(a.identity, body);
    const wire = await a.encryptParams(params);

    expect(Object.keys(wire).sort()).toEqual(['ciphertext', 'wmp']);
    expect(wire.wmp).toEqual({ ...params.wmp, encrypted: true, epoch: a.epoch });
    expect(wire.ciphertext).toMatch(/^[A-Za-z0-9_-]+$/);
    // Neither the body nor the other content fields are visible anywhere on the wire.
    const text = JSON.stringify(wire);
    for (const secret of ['INV-1001', '42.00', 'did:example:bob', 'application/json', 'content_type', 'body']) {
      expect(text).not.toContain(secret);
    }
    expect(Buffer.from(b64urlDecode(wire.ciphertext as string)).includes(Buffer.from('INV-1001'))).toBe(false);

    const back = await b.decryptParams(wire);
    expect(back).toEqual({ ...params, wmp: wire.wmp });
    // The input was not modified.
    expect(params.wmp).not.toHaveProperty('encrypted');
  });

  it('works both ways and for params without wmp', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const wire = await b.encryptParams({ message_ids: ['m-1'], status: 'read' });
    expect(wire.wmp).toEqual({ encrypted: true, epoch: 1 });
    expect(await a.decryptParams(wire)).toEqual({ wmp: wire.wmp, message_ids: ['m-1'], status: 'read' });
  });

  it('refuses params it cannot encrypt', async () => {
    const { groups } = await groupOf(2);
    const a = groups[0]!;
    await expectRefused(a.encryptParams([] as never), 'invalid_params');
    await expectRefused(a.encryptParams({ wmp: 'x', body: 1 }), 'invalid_params');
    await expectRefused(a.encryptParams({ body: 2 ** 60 }), 'invalid_params');
    await expectRefused(a.encryptParams({ body: Number.NaN }), 'invalid_params');
    const once = await a.encryptParams({ body: 1 });
    await expectRefused(a.encryptParams(once), 'invalid_params');
  });

  it('refuses encrypted params whose clear metadata lies, or that are not encrypted params', async () => {
    const { groups } = await groupOf(3);
    const [a, b, c] = groups as [MlsGroup, MlsGroup, MlsGroup];
    const wire = await a.encryptParams(deliverParams(a.identity, 'hi'));
    const wmp = wire.wmp as Record<string, unknown>;

    // Another member claims to be the sender: MLS says who signed it.
    const spoofed = await c.encryptParams(deliverParams(a.identity, 'I am alice'));
    const err = await expectRefused(b.decryptParams(spoofed), 'sender_mismatch');
    expect(err).toBeInstanceOf(MlsError);
    expect(err.toJsonRpc()).toEqual({ code: -31004, message: 'MLS error', data: { reason: 'sender_mismatch' } });
    // Unless the caller uses another identifier scheme in wmp.sender.
    const relaxed = await c.encryptParams(deliverParams('x509:san:dns:carol.example', 'other scheme'));
    expect((await b.decryptParams(relaxed, { checkSender: false })).body).toBe('other scheme');

    await expectRefused(b.decryptParams({ ...wire, wmp: { ...wmp, epoch: 7 } }), 'epoch_mismatch');
    await expectRefused(b.decryptParams({ ...wire, wmp: { ...wmp, epoch: -1 } }), 'invalid_params');
    await expectRefused(b.decryptParams({ ...wire, wmp: { ...wmp, encrypted: false } }), 'invalid_params');
    await expectRefused(b.decryptParams({ wmp }), 'invalid_params');
    await expectRefused(b.decryptParams({ ...wire, ciphertext: 'AAAA' }), 'malformed');
    // After all of that, the real message still reads.
    expect((await b.decryptParams(wire)).body).toBe('hi');
  });

  it('refuses a plaintext that is not a JSON object, or that smuggles its own wmp', async () => {
    const { groups } = await groupOf(2);
    const [a, b] = groups as [MlsGroup, MlsGroup];
    const wrap = async (text: string) => {
      const m = await a.encrypt(te.encode(text));
      return { wmp: { version: '0.1', sender: a.identity, encrypted: true, epoch: m.epoch }, ciphertext: m.ciphertext };
    };
    await expectRefused(b.decryptParams(await wrap('[1,2]')), 'invalid_plaintext');
    await expectRefused(b.decryptParams(await wrap('{"a":1,"a":2}')), 'invalid_plaintext');
    await expectRefused(b.decryptParams(await wrap('not json')), 'invalid_plaintext');
    await expectRefused(
      b.decryptParams(await wrap(`{"wmp":{"sender":"${generateKeypair().did}"},"body":1}`)),
      'invalid_plaintext',
    );
    expect(await b.decryptParams(await wrap('{"body":1}'))).toMatchObject({ body: 1 });
  });
});
