// Records a peer relay sends back about a message under evidence here (wmp-tables §9), taken by
// the evidence room over real memory stores: a record signed by the relay it names, about our case
// of the message (its content hash, a recipient we took it for), is kept and passed on to the
// sender once, even before our own `relay_forwarded`; anything else is refused by cause, nothing
// kept and nothing sent.
import { generateKeypair, type Keypair, signEvidence } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { MemoryEvidenceStore, MemoryQueueStore } from '../src/index.js';
import { resolveEvidenceConfig } from '../src/relay/evidence/evidence-config.js';
import { evidenceRoom } from '../src/relay/evidence/evidence-room.js';
import { silentLogger } from '../src/relay/support/logger.js';
import { RelayMetrics } from '../src/relay/support/metrics.js';
import { RefusalLog } from '../src/relay/support/refusals.js';

const ALICE = generateKeypair().did;
const BOB = generateKeypair().did;
const HASH = 'aGFzaC1vZi10aGUtY29udGVudA';

async function room() {
  const store = new MemoryEvidenceStore();
  const queue = new MemoryQueueStore();
  const refusals = new RefusalLog(silentLogger, 60_000, Date.now);
  const offered: string[] = [];
  const { fromPeers } = evidenceRoom({
    store,
    config: resolveEvidenceConfig(),
    identity: generateKeypair(),
    origin: () => 'http://127.0.0.1:1',
    queue,
    // Who was offered a notify (the live forwarder is the router's; here nobody is online).
    forwarder: { offer: (identity) => offered.push(identity) },
    ttlMs: 60_000,
    maxQueued: 100,
    metrics: new RelayMetrics(),
    refusals,
    logger: silentLogger,
    now: Date.now,
  });
  const now = Date.now();
  await store.open({
    messageId: 'msg-1',
    sender: ALICE,
    recipients: [BOB],
    sessionId: 'ses-a',
    contentHash: HASH,
    submittedAt: now,
    firstEvidenceId: 'evd-first',
    eventTypes: [],
    via: undefined,
    consignment: undefined,
    expiresAt: now + 3_600_000,
  });
  return { store, queue, refusals, offered, fromPeers };
}

let n = 0;
function record(issuer: Keypair, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    evidence_id: `evd-peer-${++n}`,
    evidence_version: '1.0',
    event_type: 'delivery_confirmed',
    original_message_id: 'msg-1',
    original_sender: ALICE,
    original_content_hash: { algorithm: 'sha-256', value: HASH },
    event_time: new Date().toISOString(),
    original_recipient: BOB,
    evidence_issuer: { id: issuer.did, name: 'https://peer.example' },
    ...overrides,
  };
}

async function notify(evidence: Record<string, unknown>, signer: Keypair) {
  return { evidence, signed_evidence: await signEvidence(evidence, signer) };
}

describe('records from peer relays', () => {
  it('keeps a signed record about our case and passes it on to the sender once, before any forward of ours', async () => {
    const r = await room();
    const peer = generateKeypair();
    const params = await notify(record(peer), peer);
    expect(await r.fromPeers.take(peer.did, params)).toBe('stored');
    const id = params.evidence.evidence_id as string;
    expect(await r.store.get(id)).toMatchObject({ issuer: peer.did, parties: [ALICE, BOB] });
    expect((await r.queue.stats(ALICE)).count).toBe(1);
    expect(r.offered).toEqual([ALICE]);
    // The same record again: taken, not passed on twice.
    expect(await r.fromPeers.take(peer.did, params)).toBe('stored');
    expect((await r.queue.stats(ALICE)).count).toBe(1);
    // A record the peer passes back from a relay beyond it verifies against that relay.
    const beyond = generateKeypair();
    expect(await r.fromPeers.take(peer.did, await notify(record(beyond), beyond))).toBe('stored');
    expect((await r.queue.stats(ALICE)).count).toBe(2);
  });

  it('refuses what is malformed, signed by another, or not about our case; keeps and sends nothing', async () => {
    const r = await room();
    const peer = generateKeypair();
    const other = generateKeypair();
    const cases: [string, Record<string, unknown>][] = [
      ['malformed', { evidence: { event_type: 'delivery_confirmed' }, signed_evidence: 'x' }],
      ['signature', await notify(record(peer), other)],
      ['signature', { evidence: record(peer), signed_evidence: 'a.b.c' }],
      ['timestamp_token', { ...(await notify(record(peer), peer)), timestamp_token: 42 }],
      ['not_forwarded', await notify(record(peer, { original_message_id: 'msg-unknown' }), peer)],
      [
        'not_forwarded',
        await notify(record(peer, { original_content_hash: { algorithm: 'sha-256', value: 'b3RoZXI' } }), peer),
      ],
      ['not_forwarded', await notify(record(peer, { original_recipient: generateKeypair().did }), peer)],
    ];
    for (const [why, params] of cases) expect(await r.fromPeers.take(peer.did, params), why).toBe(why);
    expect(r.refusals.totals.get('peer_evidence_not_forwarded')).toBe(3);
    expect(r.refusals.totals.get('peer_evidence_signature')).toBe(2);
    expect((await r.queue.stats(ALICE)).count).toBe(0);
    expect(r.offered).toEqual([]);
    expect((await r.store.find({ messageId: 'msg-1' }, ALICE, undefined, 10)).total).toBe(0);
  });

  it('refuses records about a message from the relay it came through', async () => {
    const r = await room();
    const upstream = generateKeypair();
    const now = Date.now();
    await r.store.open({
      messageId: 'msg-2',
      sender: ALICE,
      recipients: [BOB],
      sessionId: undefined,
      contentHash: HASH,
      submittedAt: now,
      firstEvidenceId: 'evd-first-2',
      eventTypes: [],
      via: upstream.did,
      consignment: undefined,
      expiresAt: now + 3_600_000,
    });
    const params = await notify(record(upstream, { original_message_id: 'msg-2' }), upstream);
    expect(await r.fromPeers.take(upstream.did, params)).toBe('not_forwarded');
  });
});
