import { x25519 } from '@noble/curves/ed25519.js';
import { keypairFromSeed, toHex, utf8 } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import {
  createCard,
  createEvent,
  encKeypairFromSecret,
  idPreimage,
  MemoryNonceCache,
  OhanOpenError,
  openEvent,
  openPayload,
  paddedLength,
  sealAad,
  sealEnvelope,
  sealKey,
  signedText,
  signRequest,
  verifyCard,
  verifyEvent,
  verifyRequest,
} from '../src/index.js';
import { hex, NOW, V } from './vectors.js';

const recipientEnc = encKeypairFromSecret(hex(V.keys.recipient_enc_private_hex));
const sender = keypairFromSeed(hex(V.keys.sender_sign_seed_hex));
const recipient = keypairFromSeed(hex(V.keys.recipient_sign_seed_hex));

describe('OHAN vectors: keys and seal', () => {
  it('derives the Multikeys from the seeds', () => {
    expect(recipient.multikey).toBe(V.keys.recipient_sign_multikey);
    expect(sender.multikey).toBe(V.keys.sender_sign_multikey);
    expect(recipientEnc.multikey).toBe(V.keys.recipient_enc_multikey);
    expect(toHex(x25519.getPublicKey(hex(V.keys.ephemeral_private_hex)))).toBe(V.keys.ephemeral_public_hex);
  });

  it('reproduces shared secret, key, AAD, plaintext length and payload', () => {
    const epk = hex(V.keys.ephemeral_public_hex);
    const shared = x25519.getSharedSecret(hex(V.keys.ephemeral_private_hex), recipientEnc.publicKey);
    expect(toHex(shared)).toBe(V.seal.shared_secret_hex);
    expect(toHex(sealKey(shared, epk, recipientEnc.publicKey))).toBe(V.seal.aes_key_hex);
    expect(toHex(sealAad(V.seal.to, epk))).toBe(V.seal.aad_hex);
    expect(utf8(V.seal.envelope_json).length).toBe(V.seal.envelope_length);
    expect(paddedLength(V.seal.envelope_length)).toBe(V.seal.plaintext_length);
    const sealed = sealEnvelope(
      utf8(V.seal.envelope_json),
      { key: V.seal.to, enc: recipientEnc.multikey },
      { ephemeralSecret: hex(V.keys.ephemeral_private_hex), nonce: hex(V.seal.gcm_nonce_hex) },
    );
    expect(sealed).toEqual({ epk: V.keys.ephemeral_public_hex, payload: V.seal.payload });
    expect(new TextDecoder().decode(openPayload({ to: V.seal.to, ...sealed }, recipientEnc.secretKey))).toBe(
      V.seal.envelope_json,
    );
  });

  it.each(
    (V.padding as { envelope_length: number; plaintext_length: number }[]).map(
      (p) => [p.envelope_length, p.plaintext_length] as [number, number],
    ),
  )('pads an envelope of %i bytes to %i and back', (envelopeLength, plaintextLength) => {
    expect(paddedLength(envelopeLength)).toBe(plaintextLength);
    const envelope = utf8('x'.repeat(envelopeLength));
    const sealed = sealEnvelope(envelope, { key: recipient.multikey, enc: recipientEnc.multikey });
    expect(Buffer.from(sealed.payload, 'base64').length).toBe(12 + 16 + plaintextLength);
    expect(openPayload({ to: recipient.multikey, ...sealed }, recipientEnc.secretKey)).toEqual(envelope);
  });
});

describe('OHAN vectors: events', () => {
  for (const [name, entry] of Object.entries(V.events) as [
    string,
    { event: Record<string, unknown>; signed_jcs: string },
  ][]) {
    it(`${name}: verifies at now, with the signed JCS of the vector`, () => {
      const bits = (entry.event.stamp as { bits: number } | undefined)?.bits ?? 0;
      expect(verifyEvent(entry.event, { now: NOW, skewSeconds: V.skew_seconds })).toEqual({
        ok: true,
        id: entry.event.id,
        strength: bits,
      });
      expect(signedText(idPreimage(entry.event as never), entry.event.id as string)).toBe(entry.signed_jcs);
      // A box's seq is outside the signed bytes.
      expect(verifyEvent({ ...entry.event, seq: 7 }, { now: NOW }).ok).toBe(true);
      const opened = openEvent(entry.event as never, recipientEnc.secretKey);
      expect(opened.envelope).toBe(V.seal.envelope_json);
      expect(opened.message).toMatchObject({ jsonrpc: '2.0', method: 'wmp.message.deliver' });
    });
  }

  it('createEvent reproduces the unstamped event byte for byte', async () => {
    const expected = V.events.unstamped.event;
    const event = await createEvent({
      envelope: V.seal.envelope_json,
      to: { key: recipient.multikey, enc: recipientEnc.multikey },
      from: sender,
      ts: expected.ts,
      exp: expected.exp,
      randomness: { ephemeralSecret: hex(V.keys.ephemeral_private_hex), nonce: hex(V.seal.gcm_nonce_hex) },
    });
    expect(event).toEqual(expected);
    // An object envelope is written as JCS, which is what the vector sealed.
    const fromObject = await createEvent({
      envelope: JSON.parse(V.seal.envelope_json),
      to: { key: recipient.multikey, enc: recipientEnc.multikey },
      from: sender,
      ts: expected.ts,
      exp: expected.exp,
      randomness: { ephemeralSecret: hex(V.keys.ephemeral_private_hex), nonce: hex(V.seal.gcm_nonce_hex) },
    });
    expect(fromObject).toEqual(expected);
  });

  const validationReasons = new Set(['shape', 'id', 'signature', 'stamp', 'time', 'too_large']);
  for (const bad of V.invalid as { name: string; reason: string; event: Record<string, unknown> }[]) {
    it(`refuses "${bad.name}" with ${bad.reason}`, () => {
      const verdict = verifyEvent(bad.event, { now: NOW, skewSeconds: V.skew_seconds });
      if (validationReasons.has(bad.reason)) {
        expect(verdict).toEqual({ ok: false, reason: bad.reason });
        return;
      }
      expect(verdict.ok).toBe(true);
      let thrown: unknown;
      try {
        openEvent(bad.event as never, recipientEnc.secretKey);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(OhanOpenError);
      expect((thrown as OhanOpenError).reason).toBe(bad.reason);
    });
  }
});

describe('OHAN vectors: signed request header and card', () => {
  const rh = V.request_header;
  const request = { origin: rh.claims.origin, method: rh.claims.method, target: rh.claims.target, body: '' };

  it('signs the request header of the vector', async () => {
    const header = await signRequest({ signer: recipient, ...request, nonce: rh.claims.nonce, ts: rh.claims.ts });
    expect(header).toBe(rh.header);
  });

  it('verifies it once, and refuses a replay or any changed part', async () => {
    const now = Date.parse(rh.claims.ts);
    // The cache judges expiry by its own clock: the box's, here the vector's time.
    const nonces = new MemoryNonceCache({ now: () => now });
    const check = (over: object, header = rh.header as string) =>
      verifyRequest(header, { ...request, now, nonces, ...over });
    await expect(check({ origin: 'https://other.example' })).resolves.toEqual({ ok: false, reason: 'origin' });
    await expect(check({ method: 'POST' })).resolves.toEqual({ ok: false, reason: 'method' });
    await expect(check({ target: '/ohan/v1/events?after=1&limit=100' })).resolves.toEqual({
      ok: false,
      reason: 'target',
    });
    await expect(check({ body: '{}' })).resolves.toEqual({ ok: false, reason: 'body' });
    await expect(check({ now: now + 301_000 })).resolves.toEqual({ ok: false, reason: 'stale' });
    await expect(check({ now: now - 301_000 })).resolves.toEqual({ ok: false, reason: 'stale' });
    const [claims, sig] = (rh.header as string).slice('OHAN-Sig '.length).split('.');
    const flipped = `${sig!.slice(0, 10)}${sig![10] === 'A' ? 'B' : 'A'}${sig!.slice(11)}`;
    await expect(check({}, `OHAN-Sig ${claims}.${flipped}`)).resolves.toEqual({ ok: false, reason: 'signature' });
    await expect(check({ now: now + 299_000 })).resolves.toEqual({ ok: true, key: rh.signer_multikey });
    await expect(check({})).resolves.toEqual({ ok: false, reason: 'replay' });
  });

  it('leaves no nonce behind when `remember` says the key has nothing to replay (issue 23 item 7)', async () => {
    const now = Date.parse(rh.claims.ts);
    // The cache judges expiry by its own clock: the box's, here the vector's time.
    const nonces = new MemoryNonceCache({ now: () => now });
    const asked: string[] = [];
    const forget = (key: string) => {
      asked.push(key);
      return false;
    };
    const check = (remember: (key: string) => boolean) =>
      verifyRequest(rh.header, { ...request, now, nonces, remember, source: '203.0.113.7' });
    await expect(check(forget)).resolves.toEqual({ ok: true, key: rh.signer_multikey });
    expect(nonces.size).toBe(0);
    expect(asked).toEqual([rh.signer_multikey]);
    // Once the key is known, its nonce counts (and a replay of it then is refused).
    await expect(check(() => true)).resolves.toEqual({ ok: true, key: rh.signer_multikey });
    expect(nonces.size).toBe(1);
    await expect(check(() => true)).resolves.toEqual({ ok: false, reason: 'replay' });
  });

  it('verifies the card and reproduces its signature', async () => {
    expect(verifyCard(V.card)).toEqual({ ok: true, card: V.card });
    const card = await createCard({ signer: recipient, enc: V.card.enc, relays: V.card.relays, ts: V.card.ts });
    expect(card).toEqual(V.card);
    expect(verifyCard({ ...V.card, relays: ['https://evil.example'] })).toEqual({ ok: false, reason: 'signature' });
    expect(verifyCard({ ...V.card, relays: ['http://box.example'] })).toEqual({ ok: false, reason: 'shape' });
    expect(verifyCard({ ...V.card, extra: 1 })).toEqual({ ok: false, reason: 'shape' });
  });
});
