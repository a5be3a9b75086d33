// The operator's log events of a running relay (docs/operations.md, "Logs"): a message accepted,
// written and acknowledged; a session routed end to end opened and ended (with its counters in
// /metrics); a peer relay's link up and down. No line names an identity of a user.
import { generateKeypair } from '@wmp/jcs-signing';
import { WmpSession } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { OFFERED, responderFor } from '../../../test-support/routed-parties.js';
import { createJsonLogger, type Logger } from '../src/index.js';
import { federationTestbed } from './fixtures/federation.js';
import { relayTestbed, waitFor } from './fixtures/relay-clients.js';

interface Line {
  readonly event: string;
  readonly level: string;
  readonly [field: string]: unknown;
}

function debugLog(): { logger: Logger; lines: Line[]; text: () => string } {
  const raw: string[] = [];
  const lines: Line[] = [];
  const logger = createJsonLogger({
    level: 'debug',
    write: (l) => {
      raw.push(l);
      lines.push(JSON.parse(l) as Line);
    },
  });
  return { logger, lines, text: () => raw.join('') };
}

const of = (lines: readonly Line[], event: string) => lines.filter((l) => l.event === event);

const testbed = relayTestbed();
const fed = federationTestbed();

describe('operator events of a relay', () => {
  it('a deliver: accepted for one recipient, written to its connection, acknowledged', async () => {
    const log = debugLog();
    const url = await testbed.setup({ logger: log.logger });
    const alice = await testbed.open(url);
    const bob = await testbed.open(url);
    const got: { wmp: { message_id: string } }[] = [];
    bob.session.on('message', (m) => got.push(m as { wmp: { message_id: string } }));
    await alice.session.send([bob.keypair.did], { text: 'hi' });
    await waitFor(() => got.length === 1, 10_000, 'the message at Bob');
    await bob.session.notify('wmp.message.ack', { message_ids: [got[0]!.wmp.message_id], status: 'received' });
    await waitFor(() => of(log.lines, 'message.acked').length === 1, 10_000, 'the ack logged');
    expect(of(log.lines, 'message.accepted')).toEqual([
      expect.objectContaining({ level: 'debug', recipients: 1, remote: 0, refused: 0 }),
    ]);
    expect(of(log.lines, 'message.delivered')).toEqual([expect.objectContaining({ level: 'debug', on: 'hop' })]);
    expect(of(log.lines, 'message.acked')).toEqual([expect.objectContaining({ count: 1 })]);
    for (const who of [alice.keypair.did, bob.keypair.did]) expect(log.text()).not.toContain(who);
  });

  it('a routed session: session.opened and session.closed of kind routed, counted in /metrics', async () => {
    const log = debugLog();
    const url = await testbed.setup({ logger: log.logger });
    const alice = await testbed.open(url);
    const bob = await testbed.open(url);
    const { bridge } = await responderFor(bob.keypair, bob.peer);
    const session = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did],
      capabilities: OFFERED,
    });
    await session.request('org.example.ping', { text: 'hi' });
    await session.close();
    await waitFor(() => !bridge.sessions.has(session.id), 10_000, 'the close at B');
    const routed = (l: Line) => l.kind === 'routed';
    expect(of(log.lines, 'session.opened').filter(routed)).toEqual([
      expect.objectContaining({ level: 'info', scheme: 'did:key' }),
    ]);
    expect(of(log.lines, 'session.closed').filter(routed)).toHaveLength(1);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^wmp_relay_routed_sessions_opened_total 1$/m);
    expect(metrics).toMatch(/^wmp_relay_routed_sessions_closed_total 1$/m);
    // The ping and the close passed (the authenticate of B's server too): each counted.
    expect(Number(/^wmp_relay_routed_frames_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
    expect(log.text()).not.toContain(session.id);
  });

  it('a peer relay link: peer.link_up when it connects, peer.link_down when the peer goes', {
    timeout: 30_000,
  }, async () => {
    const [alice, bob] = [generateKeypair(), generateKeypair()];
    const log = debugLog();
    const [u1] = await fed.setup(2, (i, urls) => ({
      ...(i === 0 ? { logger: log.logger } : {}),
      federation: {
        peers: [urls[1 - i]!],
        routes: [{ pattern: i === 0 ? bob.did : alice.did, url: urls[1 - i]! }],
        timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
    }));
    const a = await fed.open(u1!, { keypair: alice });
    await a.session.send([bob.did], { n: 1 });
    await waitFor(() => of(log.lines, 'peer.link_up').length === 1, 10_000, 'the link up');
    const peerId = fed.relays[1]!.id;
    expect(of(log.lines, 'peer.link_up')[0]).toMatchObject({ level: 'info', peer_relay: peerId });
    await fed.stop(1);
    await waitFor(() => of(log.lines, 'peer.link_down').length >= 1, 10_000, 'the link down');
    expect(of(log.lines, 'peer.link_down')[0]).toMatchObject({ level: 'info', peer_relay: peerId });
    expect(of(log.lines, 'message.accepted')).toEqual([expect.objectContaining({ recipients: 0, remote: 1 })]);
  });
});
