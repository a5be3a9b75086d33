import { ErrorCode, NotAuthorizedError, SignatureInvalidError, TimestampInvalidError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import {
  b64urlDecode,
  b64urlEncode,
  concatBytes,
  contentHash,
  fromHex,
  fromUtf8,
  jcs,
  jcsBytes,
  keypairFromSeed,
  signedContentOf,
  utf8,
  verifyChallenge,
  verifyMessage,
  verifyRelayChain,
} from '../src/index.js';
import { keyOfKid, vectors, wmpOf } from './wmp-signature-vectors.js';

// Outside vectors (core §5.4, §5.7, §4.4.3): every valid case verifies, every invalid one is
// refused with the error a peer would get. Runs on both crypto paths (see crypto-path.test.ts).

/** The vectors' failure words in ours: only "format" differs (our `decodeDetachedJws` says malformed). */
const OUR_REASON: Record<string, string> = {
  signature: 'signature',
  signer_mismatch: 'signer_mismatch',
  header: 'header',
  format: 'malformed',
};

/** Why each refused chain fails in our verifier, and at which hop (the vectors give no reason). */
const CHAIN_FAILURE: Record<string, { reason: string; hop: number }> = {
  // relay2's hop signed previous_chain [relay1's signature]; alone it is checked without it.
  'first hop dropped': { reason: 'signature', hop: 0 },
  'hops reordered': { reason: 'signature', hop: 0 },
  'content changed after the hops': { reason: 'signature', hop: 0 },
  "a hop's timestamp altered": { reason: 'signature', hop: 0 },
  // Every hop it holds verifies; only the relay the message came from shows the cut.
  'last hop cut off (caller expects relay2)': { reason: 'last_hop_mismatch', hop: 0 },
};

async function refusal(run: () => Promise<unknown>): Promise<{ error: unknown; code: number; data: unknown }> {
  try {
    await run();
  } catch (error) {
    const { code, data } = error as { code: number; data: unknown };
    return { error, code, data };
  }
  throw new Error('expected a refusal, but it verified');
}

const headerOf = (jws: string): string => jws.split('.')[0]!;

describe('outside vectors: keys', () => {
  it.each(Object.entries(vectors.keys))('%s: our keypair from the seed has the vector key, did and kid', (_n, k) => {
    const kp = keypairFromSeed(fromHex(k.seed_hex));
    expect(Buffer.from(kp.publicKey).toString('hex')).toBe(k.public_hex);
    expect(kp.did).toBe(k.did);
    expect(kp.kid).toBe(k.kid);
  });

  it('the vector headers are not in JCS member order, so a verifier must sign over them as received', () => {
    const signature = wmpOf(vectors.message_signatures[0]!.message).signature as string;
    const text = fromUtf8(b64urlDecode(headerOf(signature)));
    expect(Object.keys(JSON.parse(text))).toEqual(['alg', 'kid', 'b64', 'crit']);
    expect(text).not.toBe(jcs(JSON.parse(text)));
  });
});

describe('outside vectors: message signatures (core §5.4)', () => {
  const valid = vectors.message_signatures.filter((c) => c.valid);
  const invalid = vectors.message_signatures.filter((c) => !c.valid);

  it.each(valid.map((c) => [c.name, c] as const))('verifies: %s', async (_name, c) => {
    const kid = vectors.keys.alice.kid;
    await expect(
      verifyMessage(c.message, { required: true, ...(c.signer ? { signer: c.signer } : {}) }),
    ).resolves.toEqual({
      kid,
      signer: kid.split('#')[0],
      alg: 'EdDSA',
      x5c: undefined,
      publicKey: fromHex(vectors.keys.alice.public_hex),
    });
  });

  it.each(invalid.map((c) => [c.name, c] as const))('refuses with -31010: %s', async (_name, c) => {
    const r = await refusal(() => verifyMessage(c.message, { required: true }));
    expect(r.error).toBeInstanceOf(SignatureInvalidError);
    expect(r.code).toBe(ErrorCode.SignatureInvalid);
    expect(c.reason).toBeDefined();
    expect(r.data).toEqual({ reason: OUR_REASON[c.reason!] });
  });

  it("the signer_mismatch case is a real signature by mallory, refused only for not being the sender's", async () => {
    const c = vectors.message_signatures.find((v) => v.reason === 'signer_mismatch')!;
    await expect(verifyMessage(c.message, { signer: vectors.keys.mallory.did })).resolves.toMatchObject({
      kid: vectors.keys.mallory.kid,
    });
  });

  it.each(valid.map((c) => [c.name, c] as const))(
    'our signer over the vector header reproduces its signature byte for byte: %s',
    (_name, c) => {
      const signature = wmpOf(c.message).signature as string;
      const [header, payload, sig] = signature.split('.');
      expect(payload).toBe('');
      const kid = JSON.parse(fromUtf8(b64urlDecode(header!))).kid as string;
      const kp = keypairFromSeed(fromHex(keyOfKid(kid).seed_hex));
      const input = concatBytes(utf8(`${header}.`), jcsBytes(signedContentOf(c.message)));
      expect(b64urlEncode(kp.sign(input))).toBe(sig);
    },
  );
});

describe('outside vectors: headers in their order, re-signed by alice', () => {
  // The first valid case with its header text replaced and a correct signature over the new
  // header: only the header rules can refuse these, whatever the member order.
  const base = vectors.message_signatures[0]!;
  const kid = vectors.keys.alice.kid;
  const alice = keypairFromSeed(fromHex(vectors.keys.alice.seed_hex));

  function withHeader(headerText: string) {
    const header = b64urlEncode(utf8(headerText));
    const input = concatBytes(utf8(`${header}.`), jcsBytes(signedContentOf(base.message)));
    const message = structuredClone(base.message);
    wmpOf(message).signature = `${header}..${b64urlEncode(alice.sign(input))}`;
    return message;
  }

  it('verifies any spelling of a sound header (the bytes are signed as received)', async () => {
    const spaced = `{ "alg": "EdDSA", "kid": "${kid}", "b64": false, "crit": [ "b64" ] }`;
    await expect(verifyMessage(withHeader(spaced))).resolves.toMatchObject({ kid });
  });

  it.each([
    ['a duplicate kid', `{"alg":"EdDSA","kid":"${kid}","b64":false,"crit":["b64"],"kid":"${kid}"}`],
    ['a duplicate b64', `{"alg":"EdDSA","kid":"${kid}","b64":false,"crit":["b64"],"b64":false}`],
    ['no b64', `{"alg":"EdDSA","kid":"${kid}","crit":["b64"]}`],
    ['no crit', `{"alg":"EdDSA","kid":"${kid}","b64":false}`],
    ['crit with another member', `{"alg":"EdDSA","kid":"${kid}","b64":false,"crit":["b64","exp"],"exp":1}`],
    ['crit naming b64 twice', `{"alg":"EdDSA","kid":"${kid}","b64":false,"crit":["b64","b64"]}`],
    ['alg ES256', `{"alg":"ES256","kid":"${kid}","b64":false,"crit":["b64"]}`],
    ['alg none', `{"alg":"none","kid":"${kid}","b64":false,"crit":["b64"]}`],
    ['a kid that is not a string', '{"alg":"EdDSA","kid":7,"b64":false,"crit":["b64"]}'],
  ])('refuses a header with %s (-31010 header)', async (_name, text) => {
    const r = await refusal(() => verifyMessage(withHeader(text)));
    expect(r.error).toBeInstanceOf(SignatureInvalidError);
    expect(r.data).toEqual({ reason: 'header' });
  });
});

describe('outside vectors: relay chains (core §5.7)', () => {
  it.each(vectors.relay_chains.map((c) => [c.name, c] as const))('%s', async (name, c) => {
    const chain = wmpOf(c.message).relay_chain as unknown[];
    if (c.valid) {
      await expect(verifyRelayChain(c.message, { lastRelayId: c.last_relay_id })).resolves.toBe(chain.length);
      return;
    }
    const expected = CHAIN_FAILURE[name];
    expect(expected, `no expected failure written down for "${name}"`).toBeDefined();
    const r = await refusal(() => verifyRelayChain(c.message, { lastRelayId: c.last_relay_id }));
    expect(r.error).toBeInstanceOf(SignatureInvalidError);
    expect(r.data).toEqual(expected);
  });

  it('our signer over the vector headers reproduces every hop of the two-hop chain', () => {
    const c = vectors.relay_chains.find((v) => v.name === 'two hops with previous_chain')!;
    const chain = wmpOf(c.message).relay_chain as {
      relay: string;
      relay_id: string;
      timestamp: string;
      signature: string;
    }[];
    expect(chain).toHaveLength(2);
    for (const [i, e] of chain.entries()) {
      const [header, , sig] = e.signature.split('.');
      const hop: Record<string, unknown> = {
        content_hash: contentHash(c.message),
        relay: e.relay,
        relay_id: e.relay_id,
        timestamp: e.timestamp,
      };
      if (i > 0) hop.previous_chain = chain.slice(0, i).map((p) => p.signature);
      const kp = keypairFromSeed(fromHex(keyOfKid(JSON.parse(fromUtf8(b64urlDecode(header!))).kid).seed_hex));
      expect(b64urlEncode(kp.sign(concatBytes(utf8(`${header}.`), jcsBytes(hop))))).toBe(sig);
    }
  });
});

describe('outside vectors: signed challenges (core §4.4.3)', () => {
  const now = Date.parse(vectors.now);

  it.each(vectors.challenges.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    if (c.valid) {
      await expect(verifyChallenge(c.signature, c.claims, { now })).resolves.toEqual(
        fromHex(vectors.keys.alice.public_hex),
      );
      return;
    }
    const r = await refusal(() => verifyChallenge(c.signature, c.claims, { now }));
    if (c.reason === 'clock_skew') {
      expect(r.error).toBeInstanceOf(TimestampInvalidError);
      expect(r.data).toEqual({
        reason: 'clock_skew',
        acceptable_window_seconds: 30,
        server_time: new Date(now).toISOString(),
      });
    } else {
      // A signature over other claims, or by a key that is not the sender's: authentication fails.
      expect(r.error).toBeInstanceOf(NotAuthorizedError);
      expect(r.data).toEqual({ reason: 'invalid_signed_challenge' });
    }
  });

  it('our signer over the vector header reproduces the valid challenge signature', () => {
    const c = vectors.challenges.find((v) => v.valid)!;
    const [header, , sig] = c.signature.split('.');
    const kp = keypairFromSeed(fromHex(vectors.keys.alice.seed_hex));
    expect(b64urlEncode(kp.sign(concatBytes(utf8(`${header}.`), jcsBytes(c.claims))))).toBe(sig);
  });
});
