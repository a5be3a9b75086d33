import { ErrorCode } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import { createChallenge, generateKeypair, signChallenge, verifyChallenge } from '../src/index.js';

const alice = generateKeypair();
const now = Date.parse('2026-11-29T12:00:00Z');
const claims = {
  challenge: createChallenge(),
  session_id: 'ses-abc123',
  sender: alice.did,
  timestamp: '2026-11-29T12:00:10Z',
};

async function outcome(signature: string, c = claims, at = now): Promise<unknown> {
  try {
    await verifyChallenge(signature, c, { now: at });
    return 'ok';
  } catch (e) {
    return { code: (e as { code: number }).code, data: (e as { data: unknown }).data };
  }
}

describe('signed challenges (core §4.4.3)', () => {
  it('creates challenges of 128 random bits', () => {
    const a = createChallenge();
    expect(a).toMatch(/^ch-[A-Za-z0-9_-]{22}$/);
    expect(createChallenge()).not.toBe(a);
  });

  it('verifies a challenge signed by the sender', async () => {
    const sig = await signChallenge(claims, alice);
    expect(await outcome(sig)).toBe('ok');
    await expect(verifyChallenge(sig, claims, { now })).resolves.toEqual(alice.publicKey);
  });

  it.each([
    ['another challenge', { challenge: createChallenge() }],
    ['another session', { session_id: 'ses-other' }],
    ['another sender', { sender: generateKeypair().did }],
  ])('refuses it for %s with -31002', async (_name, change) => {
    const sig = await signChallenge(claims, alice);
    expect(await outcome(sig, { ...claims, ...change })).toMatchObject({ code: ErrorCode.NotAuthorized });
  });

  it('refuses a signature by a key that is not the sender', async () => {
    const sig = await signChallenge(claims, generateKeypair());
    expect(await outcome(sig)).toMatchObject({ code: ErrorCode.NotAuthorized });
  });

  it('enforces the 30 s skew window with -31011 clock_skew', async () => {
    const sig = await signChallenge(claims, alice);
    expect(await outcome(sig, claims, now + 40_000)).toBe('ok');
    expect(await outcome(sig, claims, now + 40_001)).toEqual({
      code: ErrorCode.TimestampInvalid,
      data: { reason: 'clock_skew', acceptable_window_seconds: 30, server_time: '2026-11-29T12:00:40.001Z' },
    });
    expect(await outcome(sig, claims, now - 20_001)).toMatchObject({ code: ErrorCode.TimestampInvalid });
    expect(await outcome(sig, { ...claims, timestamp: 'yesterday' })).toMatchObject({
      code: ErrorCode.TimestampInvalid,
    });
  });
});
