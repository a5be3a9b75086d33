import { createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import canonicalize from 'canonicalize';
import { flattenedVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  appendRelayEntry,
  fromHex,
  keypairFromSeed,
  signChallenge,
  signMessage,
  verifyRelayChain,
} from '../src/index.js';
import { type VectorKey, vectors, wmpOf } from './wmp-signature-vectors.js';

// The other direction: what our signer makes from the vectors' inputs is checked by code that is
// not ours (jose, and node:crypto over a payload built here with the `canonicalize` package),
// and, Ed25519 being deterministic, matches an independent signer byte for byte.

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');
const jwkOf = (k: VectorKey) => ({ kty: 'OKP', crv: 'Ed25519', x: b64url(Buffer.from(k.public_hex, 'hex')) });

/** Core §5.4 step 1, written out again: params (or result) without `wmp`. */
function content(message: JsonRpcMessage): Record<string, unknown> {
  const container = ('params' in message ? message.params : (message as { result: unknown }).result) as Record<
    string,
    unknown
  >;
  const { wmp: _wmp, ...rest } = container;
  return rest;
}

const payloadOf = (value: unknown): Buffer => Buffer.from(canonicalize(value) as string, 'utf8');

function nodeVerify(k: VectorKey, jws: string, payload: Buffer): boolean {
  const [header, middle, sig] = jws.split('.');
  if (middle !== '') return false;
  const input = Buffer.concat([Buffer.from(`${header}.`, 'ascii'), payload]);
  return verify(null, input, createPublicKey({ key: jwkOf(k), format: 'jwk' }), Buffer.from(sig!, 'base64url'));
}

function nodeSign(k: VectorKey, header: string, payload: Buffer): string {
  const key = createPrivateKey({ key: { ...jwkOf(k), d: b64url(Buffer.from(k.seed_hex, 'hex')) }, format: 'jwk' });
  return b64url(sign(null, Buffer.concat([Buffer.from(`${header}.`, 'ascii'), payload]), key));
}

async function joseVerify(k: VectorKey, jws: string, payload: Buffer): Promise<Record<string, unknown>> {
  const [header, , signature] = jws.split('.');
  const { protectedHeader } = await flattenedVerify({ protected: header!, payload, signature: signature! }, jwkOf(k), {
    algorithms: ['EdDSA'],
  });
  return protectedHeader as Record<string, unknown>;
}

/** Asserts `jws` is a sound WMP detached JWS by `k` over `payload`, by code that is not ours. */
async function expectIndependentlyValid(k: VectorKey, jws: string, payload: Buffer): Promise<void> {
  expect(jws).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
  expect(await joseVerify(k, jws, payload)).toEqual({ alg: 'EdDSA', b64: false, crit: ['b64'], kid: k.kid });
  expect(nodeVerify(k, jws, payload)).toBe(true);
  const [header, , sig] = jws.split('.');
  expect(nodeSign(k, header!, payload)).toBe(sig);
  // And the check itself can fail: one flipped payload byte is refused.
  const other = Buffer.from(payload);
  other[other.length - 2]! ^= 1;
  expect(nodeVerify(k, jws, other)).toBe(false);
  await expect(joseVerify(k, jws, other)).rejects.toThrow();
}

/** A vector message as it was before anyone signed it. */
function unsigned(message: JsonRpcMessage): JsonRpcMessage {
  const copy = structuredClone(message);
  const wmp = wmpOf(copy);
  delete wmp.signature;
  delete wmp.relay_chain;
  return copy;
}

const { alice } = vectors.keys;

describe('interop: the vectors under jose and node:crypto', () => {
  it.each(vectors.message_signatures.filter((c) => c.valid).map((c) => [c.name, c] as const))(
    'the vector signature verifies independently too: %s',
    async (_name, c) => {
      const jws = wmpOf(c.message).signature as string;
      expect(await joseVerify(alice, jws, payloadOf(content(c.message)))).toMatchObject({ kid: alice.kid });
      expect(nodeVerify(alice, jws, payloadOf(content(c.message)))).toBe(true);
    },
  );
});

describe('interop: our signatures over the vector inputs', () => {
  it.each(vectors.message_signatures.filter((c) => c.valid).map((c) => [c.name, c] as const))(
    'signMessage: %s',
    async (_name, c) => {
      const signed = await signMessage(unsigned(c.message), keypairFromSeed(fromHex(alice.seed_hex)));
      expect(content(signed)).toEqual(content(c.message));
      await expectIndependentlyValid(alice, wmpOf(signed).signature as string, payloadOf(content(c.message)));
    },
  );

  it('appendRelayEntry: each hop of the two-hop chain', async () => {
    const c = vectors.relay_chains.find((v) => v.name === 'two hops with previous_chain')!;
    const theirs = wmpOf(c.message).relay_chain as { relay: string; relay_id: string; timestamp: string }[];
    const keys = [vectors.keys.relay1, vectors.keys.relay2];
    let m = unsigned(c.message);
    for (const [i, e] of theirs.entries()) {
      m = await appendRelayEntry(m, {
        relay: e.relay,
        relayId: e.relay_id,
        signer: keypairFromSeed(fromHex(keys[i]!.seed_hex)),
        timestamp: e.timestamp,
      });
    }
    await expect(verifyRelayChain(m, { lastRelayId: vectors.keys.relay2.did })).resolves.toBe(2);

    // Core §5.7 written out again: b64url(SHA-256(JCS(content))), the hop's fields, earlier signatures.
    const hash = b64url(
      createHash('sha256')
        .update(payloadOf(content(c.message)))
        .digest(),
    );
    const ours = wmpOf(m).relay_chain as { relay: string; relay_id: string; timestamp: string; signature: string }[];
    for (const [i, e] of ours.entries()) {
      const { relay, relay_id, timestamp } = theirs[i]!;
      expect({ relay: e.relay, relay_id: e.relay_id, timestamp: e.timestamp }).toEqual({ relay, relay_id, timestamp });
      const hop = { content_hash: hash, relay: e.relay, relay_id: e.relay_id, timestamp: e.timestamp };
      const previous = ours.slice(0, i).map((p) => p.signature);
      const payload = payloadOf(i === 0 ? hop : { ...hop, previous_chain: previous });
      await expectIndependentlyValid(keys[i]!, e.signature, payload);
    }
  });

  it('signChallenge: the valid challenge claims', async () => {
    const c = vectors.challenges.find((v) => v.valid)!;
    const jws = await signChallenge(c.claims, keypairFromSeed(fromHex(alice.seed_hex)));
    await expectIndependentlyValid(alice, jws, payloadOf(c.claims));
  });
});
