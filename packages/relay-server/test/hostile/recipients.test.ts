// Malformed recipients (issue 23 item 16): an identifier that is not well-formed for its scheme (an
// invalid did:key, say) is refused with -32602 naming it, and nothing is queued for it; a
// group cannot list one either. Identifiers of schemes with no rule pass as before.

import { base58 } from '@scure/base';
import { b64urlEncode, generateKeypair, utf8 } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { createRequest, hostileTestbed, must, RawSocket } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();

const ed25519 = generateKeypair().did;
const multikey = ed25519.slice('did:key:'.length);
const bytes = base58.decode(multikey.slice(1));
const MALFORMED: Readonly<Record<string, string>> = {
  'did:key, not base58btc (multibase u)': `did:key:u${b64urlEncode(bytes)}`,
  'did:key, base58 with a character outside it': `did:key:${multikey.slice(0, -1)}0`,
  'did:key, another multicodec (0x12 sha2-256)': `did:key:z${base58.encode(Uint8Array.of(0x12, 0x20, ...bytes.slice(2)))}`,
  'did:key, a key one byte short': `did:key:z${base58.encode(bytes.slice(0, -1))}`,
  'did:key, empty': 'did:key:',
  'did:jwk, not a JWK': `did:jwk:${b64urlEncode(utf8('"just a string"'))}`,
  'did:jwk, a private key': `did:jwk:${b64urlEncode(utf8(JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: 'AA', d: 'AA' })))}`,
  'did:web, a path escape': 'did:web:example.com:..',
  'a DID without method-specific id': 'did:example',
  'x509:san:dns, not a DNS name': 'x509:san:dns:exa mple.com',
  'x509:sha256, not 64 hex digits': 'x509:sha256:abc',
  'https, not a URL': 'https://',
};

describe('recipients malformed for their scheme (issue 23 item 16)', { timeout: 60_000 }, () => {
  it('refuses each with -32602 naming it, and queues nothing for it', async () => {
    const bed = await testbed.setup();
    const s = await RawSocket.open(bed.url);
    const login = await s.login();
    for (const [what, recipient] of Object.entries(MALFORMED)) {
      const answer = await s.deliver(login, [ed25519, recipient], { what });
      expect(answer.error, what).toMatchObject({ code: -32602, data: { reason: expect.stringMatching(/^to\.1: /) } });
      expect((await bed.relay.stores.queue.stats(recipient)).count, what).toBe(0);
    }
    // The well-formed recipient of the same requests got nothing either: the request was refused whole.
    expect((await bed.relay.stores.queue.stats(ed25519)).count).toBe(0);
    // Well-formed ones of every scheme pass, and schemes with no rule pass as before.
    const fine = [
      ed25519,
      `did:jwk:${b64urlEncode(utf8(JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' })))}`,
      'did:web:example.com%3A8443:users:bob',
      'did:example:123456',
      'x509:san:dns:wallet.example.com',
      `x509:sha256:${'ab'.repeat(32)}`,
      'https://wallet.example.com/bob',
      'urn:example:bob',
      'opaque-id',
    ];
    const sent = must(await s.deliver(login, fine, { all: 'fine' }));
    expect(sent.message_id).toEqual(expect.any(String));
    for (const recipient of fine) expect((await bed.relay.stores.queue.stats(recipient)).count, recipient).toBe(1);
    await bed.checkHealthy();
  });

  it('refuses a group session listing a malformed participant (-32602), before anything is stored', async () => {
    const bed = await testbed.setup();
    const s = await RawSocket.open(bed.url);
    const creator = generateKeypair();
    const bad = MALFORMED['did:key, not base58btc (multibase u)']!;
    const before = (await bed.relay.stores.sessions.counts()).sessions;
    const refused = await s.call(
      'wmp.session.create',
      createRequest(creator.did, { participants: [generateKeypair().did, bad] }).params,
    );
    expect(refused.error).toMatchObject({
      code: -32602,
      data: { reason: expect.stringMatching(/^participants\.1: /) },
    });
    expect((await bed.relay.stores.sessions.counts()).sessions).toBe(before);
    await bed.checkHealthy();
  });

  // The relay keeps peers' outboxes and held messages (scheduled, awaiting consent) in queues of
  // their own, keyed `relay:`, `sched:` and `held:`: a deliver naming one would write into it.
  it('refuses the keys of its own queues as recipients (-32602), and writes nothing there', async () => {
    const bed = await testbed.setup();
    const s = await RawSocket.open(bed.url);
    const login = await s.login();
    for (const key of ['relay:https://peer.example', `held:${ed25519}`, `sched:${ed25519}`]) {
      const answer = await s.deliver(login, [key], { into: key });
      expect(answer.error, key).toMatchObject({ code: -32602, data: { reason: 'to.0: not an identifier' } });
      expect((await bed.relay.stores.queue.stats(key)).count, key).toBe(0);
    }
    const refused = await s.call(
      'wmp.session.create',
      createRequest(generateKeypair().did, { participants: [`held:${ed25519}`] }).params,
    );
    expect(refused.error).toMatchObject({ code: -32602, data: { reason: 'participants.0: not an identifier' } });
    await bed.checkHealthy();
  });
});
