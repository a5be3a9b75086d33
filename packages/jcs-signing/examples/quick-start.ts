// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import {
  appendRelayEntry,
  createChallenge,
  cryptoPath,
  generateKeypair,
  jcs,
  signChallenge,
  signMessage,
  toHex,
  verifyChallenge,
  verifyMessage,
  verifyRelayChain,
} from '@wmp/jcs-signing';
import { type JsonRpcNotification, WmpError } from '@wmp/jsonrpc-envelope';

/** The WMP error code and `data.reason` a failed verification throws. */
async function failure(check: Promise<unknown>): Promise<string> {
  try {
    await check;
    return 'verified (unexpected)';
  } catch (e) {
    if (!(e instanceof WmpError)) throw e;
    return `${e.code} ${(e.data as { reason: string }).reason}`;
  }
}

// Identities: Ed25519 keys named by did:key (or did:jwk with { didMethod: 'jwk' }).
const alice = generateKeypair();
const mallory = generateKeypair();
const relay = generateKeypair();
console.log('crypto path:', cryptoPath);
console.log('alice:', alice.did);

// RFC 8785: sorted keys, no whitespace, ECMAScript number formatting.
console.log('jcs:', jcs({ b: [1e21, 0.1, -0], a: 'héllo', c: { z: true, y: null } }));

// A non-repudiation signature covers params minus `wmp`, and lives in params.wmp.signature.
const deliver: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'wmp.message.deliver',
  params: {
    wmp: { version: '0.1', session_id: 'ses-4f9a2c7d', sender: alice.did, timestamp: '2026-11-29T12:00:00Z' },
    to: ['did:example:bob'],
    content_type: 'application/json',
    body: { invoice: 'INV-1001', amount: '42.00', currency: 'EUR' },
  },
};
const signed = await signMessage(deliver, alice);
const verified = await verifyMessage(signed, { required: true });
console.log('signed by:', verified?.kid === alice.kid ? 'alice' : verified?.kid);

const params = signed.params as { body: Record<string, unknown> };
const tampered = { ...signed, params: { ...params, body: { ...params.body, amount: '4200.00' } } };
console.log('tampered:', await failure(verifyMessage(tampered)));
// Sender binding: the signing key's DID must be wmp.sender.
console.log('forged:', await failure(verifyMessage(await signMessage(deliver, mallory))));

// Each relay appends a signed hop to wmp.relay_chain; the sender's signature still holds.
const relayed = await appendRelayEntry(signed, { relay: 'wss://relay.example/wmp', relayId: relay.did, signer: relay });
console.log('relay hops:', await verifyRelayChain(relayed, { lastRelayId: relay.did }));
console.log('still signed by alice:', (await verifyMessage(relayed))?.kid === alice.kid);

// Signed challenge (session authentication): the server's challenge, bound to session, sender and time.
const claims = {
  challenge: createChallenge(),
  session_id: 'ses-4f9a2c7d',
  sender: alice.did,
  timestamp: new Date().toISOString(),
};
const proof = await signChallenge(claims, alice);
const key = await verifyChallenge(proof, claims);
console.log('challenge key is alice:', toHex(key) === toHex(alice.publicKey));
console.log('wrong session:', await failure(verifyChallenge(proof, { ...claims, session_id: 'ses-other' })));
console.log('a minute late:', await failure(verifyChallenge(proof, claims, { now: Date.now() + 60_000 })));
