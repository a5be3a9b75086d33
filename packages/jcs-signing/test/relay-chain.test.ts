import type { JsonRpcNotification, RelayEntry } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import {
  appendRelayEntry,
  chainUnderEvidence,
  generateKeypair,
  type Keypair,
  signOwnEntry,
  verifyRelayChain,
} from '../src/index.js';

const relays = [generateKeypair(), generateKeypair(), generateKeypair()];
const message: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'wmp.message.deliver',
  params: { wmp: { version: '0.1', sender: 'did:key:alice' }, to: ['did:key:bob'], body: 'hi' },
};

async function throughRelays(keys: Keypair[]): Promise<JsonRpcNotification> {
  let m = message;
  for (const [i, k] of keys.entries()) {
    m = await appendRelayEntry(m, {
      relay: `wss://relay${i}.example/wmp`,
      relayId: k.did,
      signer: k,
      timestamp: `2026-11-29T12:00:0${i}Z`,
    });
  }
  return m;
}

const chainOf = (m: JsonRpcNotification) => (m.params as { wmp: { relay_chain: RelayEntry[] } }).wmp.relay_chain;
const withChain = (m: JsonRpcNotification, chain: RelayEntry[]): JsonRpcNotification => {
  const params = m.params as { wmp: object };
  return { ...m, params: { ...params, wmp: { ...params.wmp, relay_chain: chain } } };
};

async function failure(m: JsonRpcNotification, options = {}): Promise<unknown> {
  try {
    await verifyRelayChain(m, options);
    return 'ok';
  } catch (e) {
    return (e as { data: unknown }).data;
  }
}

describe('relay chain (core §5.7)', () => {
  it('verifies a three-hop chain, each entry naming the signatures before it', async () => {
    const m = await throughRelays(relays);
    expect(await verifyRelayChain(m, { lastRelayId: relays[2]!.did })).toBe(3);
    expect(chainOf(m).map((e) => e.relay_id)).toEqual(relays.map((r) => r.did));
  });

  it('detects a dropped hop', async () => {
    const chain = chainOf(await throughRelays(relays));
    expect(await failure(withChain(message, [chain[0]!, chain[2]!]))).toEqual({ reason: 'signature', hop: 1 });
    expect(await failure(withChain(message, [chain[1]!, chain[2]!]))).toEqual({ reason: 'signature', hop: 0 });
  });

  it('detects a cut-off last hop when the receiver knows who handed it the message', async () => {
    const chain = chainOf(await throughRelays(relays));
    const truncated = withChain(message, chain.slice(0, 2));
    expect(await failure(truncated)).toBe('ok');
    expect(await failure(truncated, { lastRelayId: relays[2]!.did })).toEqual({ reason: 'last_hop_mismatch', hop: 1 });
  });

  it('detects reordered hops', async () => {
    const chain = chainOf(await throughRelays(relays));
    expect(await failure(withChain(message, [chain[0]!, chain[2]!, chain[1]!]))).toEqual({
      reason: 'signature',
      hop: 1,
    });
  });

  it('detects an altered hop and altered content', async () => {
    const m = await throughRelays(relays);
    const chain = chainOf(m);
    const altered = [chain[0]!, { ...chain[1]!, timestamp: '2026-11-29T13:00:00Z' }, chain[2]!];
    expect(await failure(withChain(m, altered))).toEqual({ reason: 'signature', hop: 1 });
    const stolen = [chain[0]!, { ...chain[1]!, relay_id: relays[0]!.did }, chain[2]!];
    expect(await failure(withChain(m, stolen))).toEqual({ reason: 'signer_mismatch', hop: 1 });
    const content = { ...m, params: { ...(m.params as object), body: 'hi!' } };
    expect(await failure(content)).toEqual({ reason: 'signature', hop: 0 });
  });

  it('refuses an unsigned hop', async () => {
    const chain = chainOf(await throughRelays(relays));
    const { signature: _s, ...unsigned } = chain[1]!;
    expect(await failure(withChain(message, [chain[0]!, unsigned, chain[2]!]))).toEqual({ reason: 'missing', hop: 1 });
    // Unsigned hops may be allowed (core §5.7: a SHOULD), but not an altered signed one after them.
    const allowUnsigned = { allowUnsigned: true };
    expect(await failure(withChain(message, [chain[0]!, unsigned, chain[2]!]), allowUnsigned)).toEqual({
      reason: 'signature',
      hop: 2,
    });
    // A chain made with an unsigned hop in it: the hop after signs it as null, and it verifies.
    const first = await appendRelayEntry(message, {
      relay: 'wss://relay0.example/wmp',
      relayId: relays[0]!.did,
      signer: relays[0]!,
    });
    const entry = { relay: 'wss://relay1.example/wmp', relay_id: relays[1]!.did, timestamp: '2026-11-29T12:00:01Z' };
    const withUnsigned = withChain(first, [...chainOf(first), entry]);
    const last = await appendRelayEntry(withUnsigned, {
      relay: 'wss://relay2.example/wmp',
      relayId: relays[2]!.did,
      signer: relays[2]!,
    });
    await expect(verifyRelayChain(last, allowUnsigned)).resolves.toBe(3);
    expect(await failure(last)).toEqual({ reason: 'missing', hop: 1 });
  });
});

describe('relay chain entries written unsigned, signed when they carry value', () => {
  const hop = (i: number, extra: object = {}) => ({
    relay: `wss://relay${i}.example/wmp`,
    relayId: relays[i]!.did,
    signer: relays[i]!,
    timestamp: `2026-11-29T12:00:0${i}Z`,
    ...extra,
  });

  it('sign: false writes relay, relay_id and timestamp only; allowUnsigned takes it, the default refuses it', async () => {
    const m = await appendRelayEntry(message, hop(0, { sign: false }));
    expect(chainOf(m)).toEqual([
      { relay: 'wss://relay0.example/wmp', relay_id: relays[0]!.did, timestamp: '2026-11-29T12:00:00Z' },
    ]);
    await expect(verifyRelayChain(m, { allowUnsigned: true })).resolves.toBe(1);
    expect(await failure(m)).toEqual({ reason: 'missing', hop: 0 });
  });

  it('signOwnEntry signs the unsigned last entry as it would have been signed at once', async () => {
    const unsigned = await appendRelayEntry(message, hop(0, { sign: false }));
    const signedLater = withChain(unsigned, await signOwnEntry(unsigned, hop(0)));
    const signedAtOnce = await appendRelayEntry(message, hop(0));
    expect(chainOf(signedLater)).toEqual(chainOf(signedAtOnce));
    await expect(verifyRelayChain(signedLater, { lastRelayId: relays[0]!.did })).resolves.toBe(1);
    // A signed entry stays as it is; another relay's last entry is not ours to sign.
    expect(await signOwnEntry(signedAtOnce, hop(0))).toEqual(chainOf(signedAtOnce));
    await expect(signOwnEntry(unsigned, hop(1))).rejects.toMatchObject({ code: -31010, data: { reason: 'malformed' } });
    // The next hop signs over it: the whole chain verifies without allowUnsigned.
    const next = await appendRelayEntry(signedLater, hop(1));
    await expect(verifyRelayChain(next)).resolves.toBe(2);
  });

  it('a chain under evidence (service_class registered) needs every entry signed, allowUnsigned or not', async () => {
    const registered = await appendRelayEntry(message, hop(0, { serviceClass: 'registered' }));
    expect(chainUnderEvidence(chainOf(registered))).toBe(true);
    expect(chainUnderEvidence(chainOf(message as JsonRpcNotification))).toBe(false);
    const unsignedAfter = await appendRelayEntry(registered, hop(1, { sign: false }));
    expect(await failure(unsignedAfter, { allowUnsigned: true })).toEqual({ reason: 'missing', hop: 1 });
    const signedAfter = await appendRelayEntry(registered, hop(1));
    await expect(verifyRelayChain(signedAfter, { allowUnsigned: true })).resolves.toBe(2);
    // The same unsigned second entry without the evidence mark is allowed.
    const plain = await appendRelayEntry(await appendRelayEntry(message, hop(0)), hop(1, { sign: false }));
    await expect(verifyRelayChain(plain, { allowUnsigned: true })).resolves.toBe(2);
  });
});
