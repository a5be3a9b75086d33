// Issue 12, item 9: directory cards without limit or expiry. The directory holds at most
// --max-cards (503 box_full), a card that is not posted again expires, and an operator who opts in
// asks a stamp of the card of a key the box does not know (403 stamp_required, naming no lane).
// Issue 23, item 10: by default a card as the OHAN card format has it (no `stamp`) is taken.
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { createCard, generateEncKeypair } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import { BOX_API_PREFIX } from '../../src/node.js';
import { hostileTestbed, post, TestClock } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const BITS = 8;
const TTL = 60;

/** A card of `key` listing the box at `origin`, stamped at `stampBits` (0: no stamp). */
async function card(key: Keypair, origin: string, stampBits = BITS, ts?: Date) {
  return createCard({
    signer: key,
    enc: generateEncKeypair().multikey,
    relays: [origin],
    ...(stampBits === 0 ? {} : { stampBits }),
    ...(ts === undefined ? {} : { ts }),
  });
}
const postCard = (url: string, body: unknown) => post(url, body, {}, `${BOX_API_PREFIX}/cards`);
const lookup = (url: string, key: string) => post(url, { key }, {}, `${BOX_API_PREFIX}/cards/lookup`);
const keyOf = (k: Keypair) => k.multikey;

describe('directory cards (issue 12 item 9)', { timeout: 60_000 }, () => {
  it('takes a card without a stamp by default: the card format has none (issue 23 item 10)', async () => {
    const bed = await testbed.setup({}, { box: { directory: true } });
    bed.mountBox();
    const limits = await (await fetch(`${bed.url}${BOX_API_PREFIX}/limits`)).json();
    expect(limits.card_stamp_bits).toBe(0);
    const fresh = generateKeypair();
    const unstamped = await card(fresh, bed.url, 0);
    expect(unstamped).not.toHaveProperty('stamp');
    expect(await postCard(bed.url, unstamped)).toMatchObject({ status: 201, body: { key: keyOf(fresh) } });
    expect(await lookup(bed.url, keyOf(fresh))).toMatchObject({ status: 200, body: unstamped });
    await bed.checkHealthy();
  });

  it('asks a stamp of a fresh key, caps the directory (box_full) and names no lane in any answer', async () => {
    const bed = await testbed.setup(
      {},
      { box: { directory: true, maxCards: 3, cardStampBits: BITS, strangerBits: BITS, cardTtlSeconds: TTL } },
    );
    bed.mountBox();
    const fresh = generateKeypair();
    const unstamped = await postCard(bed.url, await card(fresh, bed.url, 0));
    expect(unstamped).toMatchObject({ status: 403, body: { error: { code: 'stamp_required' } } });
    // OHAN-04: an error answer never names a lane.
    expect(JSON.stringify(unstamped.body)).not.toMatch(/stranger|contact|lane/i);
    expect((await postCard(bed.url, await card(fresh, bed.url))).status).toBe(201);

    for (let i = 0; i < 2; i++)
      expect((await postCard(bed.url, await card(generateKeypair(), bed.url))).status).toBe(201);
    const full = await postCard(bed.url, await card(generateKeypair(), bed.url));
    expect(full).toMatchObject({ status: 503, body: { error: { code: 'box_full' } } });
    expect(JSON.stringify(full.body)).not.toMatch(/stranger|contact|lane/i);
    // A known key refreshes its card in a full directory.
    expect((await postCard(bed.url, await card(fresh, bed.url, BITS, new Date(Date.now() + 1000)))).status).toBe(201);
    await bed.checkHealthy();
  });

  it('lets a card expire unless it is posted again, and its place is taken again', async () => {
    const bed = await testbed.setup(
      {},
      { box: { directory: true, maxCards: 2, cardStampBits: BITS, strangerBits: BITS, cardTtlSeconds: TTL } },
    );
    const clock = new TestClock(true);
    bed.mountBox({ now: clock.now, sweepIntervalMs: 50 });
    const [kept, dropped] = [generateKeypair(), generateKeypair()];
    const keptCard = await card(kept, bed.url);
    expect((await postCard(bed.url, keptCard)).status).toBe(201);
    expect((await postCard(bed.url, await card(dropped, bed.url))).status).toBe(201);

    clock.advance((TTL / 2) * 1000);
    // The same card again: nothing changes but its expiry.
    expect((await postCard(bed.url, keptCard)).status).toBe(200);
    clock.advance((TTL / 2 + 1) * 1000);
    expect((await lookup(bed.url, keyOf(kept))).status).toBe(200);
    expect(await lookup(bed.url, keyOf(dropped))).toMatchObject({ status: 404 });
    // The expired card's place is free again (a sweep runs every 50 ms).
    const newcomer = generateKeypair();
    const newcomerCard = await card(newcomer, bed.url);
    await waitFor(
      async () => (await postCard(bed.url, newcomerCard)).status === 201,
      15_000,
      "the expired card's place",
    );
    expect((await lookup(bed.url, keyOf(newcomer))).status).toBe(200);
    await bed.checkHealthy();
  });
});
