// The acknowledgements of the statuses a peer kept for us (status-acks.ts): a turn's ids go in
// one `wmp.message.ack` on the next turn, in the order their statuses were handed on, at most
// MAX_ACK_IDS each; a failed send loses nothing later ones need (the peer sends the status again).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MAX_ACK_IDS, StatusAcks } from '../src/relay/federation/status-acks.js';
import { waitFor } from './fixtures/relay-clients.js';

function recording(fail = () => false) {
  const sent: string[][] = [];
  const acks = new StatusAcks(async (ids) => {
    sent.push(ids);
    if (fail()) throw new Error('link down');
  });
  return { sent, acks };
}

describe('federation: statuses acknowledged together', () => {
  it("acknowledges a turn's statuses in one frame, in order, on the next turn", async () => {
    const { sent, acks } = recording();
    for (const id of ['m1', 'm2', 'm3']) acks.add(id);
    expect(sent).toEqual([]);
    await waitFor(() => sent.length === 1);
    expect(sent).toEqual([['m1', 'm2', 'm3']]);
    acks.add('m4');
    await waitFor(() => sent.length === 2);
    expect(sent[1]).toEqual(['m4']);
  });

  it('splits a burst into frames of at most MAX_ACK_IDS ids', async () => {
    const { sent, acks } = recording();
    const ids = Array.from({ length: 2 * MAX_ACK_IDS + 7 }, (_, i) => `m${i}`);
    for (const id of ids) acks.add(id);
    await waitFor(() => sent.length === 3);
    expect(sent.map((s) => s.length)).toEqual([MAX_ACK_IDS, MAX_ACK_IDS, 7]);
    expect(sent.flat()).toEqual(ids);
  });

  it('keeps acknowledging after a send failed (the link dropped: the peer sends those again)', async () => {
    let failing = true;
    const { sent, acks } = recording(() => failing);
    acks.add('lost');
    await waitFor(() => sent.length === 1);
    await nextTurn();
    failing = false;
    acks.add('next');
    await waitFor(() => sent.length === 2);
    expect(sent).toEqual([['lost'], ['next']]);
  });
});
