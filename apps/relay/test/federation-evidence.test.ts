// Evidence across two federated wmp-relay processes (wmp-tables §9), each on its own SQLite
// directory: Alice at relay 1 sends under evidence to Bob at relay 2. Relay 1 records the
// submission and the forward; relay 2 records what it witnesses (accepted from relay 1, delivered,
// handed over, retrieved) and sends each record back to relay 1, which checks and keeps it and
// passes it on to Alice.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair, verifyEvidence, verifyRelayChain } from '@wmp/jcs-signing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  collectEvidence,
  EVIDENCE_CAPABILITIES,
  getSigned,
  signedSend,
  typesOf,
} from '../../../test-support/evidence-clients.js';
import { freePort } from '../../../test-support/services/index.js';
import { publishCard } from './fixtures/cards.js';
import { openClient, type RelayProcess, startRelayProcess, waitFor } from './fixtures/relay-process.js';

const dirs: string[] = [];
const running: RelayProcess[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.child.kill('SIGKILL');
    await r.exited;
  }
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Two relays, peers of each other, on their own ports and data directories; `extra[i]` for relay i. */
async function relayPair(extra: [string[], string[]] = [[], []]) {
  const ports = [await freePort(), await freePort()];
  const urls = ports.map((p) => `http://127.0.0.1:${p}`) as [string, string];
  for (const i of [0, 1] as const) {
    const data = mkdtempSync(join(tmpdir(), 'wmp-federation-evidence-'));
    dirs.push(data);
    const r = await startRelayProcess(
      [
        ...['--port', String(ports[i]), '--data-dir', data, '--log-level', 'warn'],
        ...['--peer', urls[1 - i]!, '--card-stamp-bits', '0', '--rate', '100000', '--rate-burst', '100000'],
        ...extra[i],
      ],
      { timeoutMs: 60_000 },
    );
    running.push(r);
  }
  const ids = await Promise.all(
    urls.map(
      async (u) =>
        ((await (await fetch(`${u}/.well-known/wmp-configuration`)).json()) as { relay_id: string }).relay_id,
    ),
  );
  return { urls, ids };
}

describe('evidence across two federated relays', () => {
  it('relay 1 records the submission and the forward, relay 2 the delivery: every record reaches Alice', async () => {
    const { urls, ids } = await relayPair();
    const [aliceKey, bobKey] = [generateKeypair(), generateKeypair()];
    await publishCard(urls[0], aliceKey);
    await publishCard(urls[1], bobKey);
    const alice = await openClient(urls[0], 'ws', aliceKey, EVIDENCE_CAPABILITIES);
    const bob = await openClient(urls[1], 'ws', bobKey);
    const notifies = collectEvidence(alice);

    const sent = await signedSend(alice, [bobKey.did], { contract: 'C-9' });
    await waitFor(() => bob.inbox.length === 1, 60_000);
    // Under evidence every entry is signed and of the registered service class; the chain verifies whole.
    const got = bob.inbox[0]!;
    expect(got.wmp.relay_chain.map((e: { relay_id: string }) => e.relay_id)).toEqual(ids);
    expect(got.wmp.relay_chain.every((e: { service_class?: string }) => e.service_class === 'registered')).toBe(true);
    expect(await verifyRelayChain({ jsonrpc: '2.0', method: 'wmp.message.deliver', params: got })).toBe(2);
    await bob.session.notify('wmp.message.ack', { message_ids: [sent.message_id], status: 'received' });

    await waitFor(() => notifies.length === 6, 60_000);
    const issuedBy = (type: string) =>
      notifies.find((n) => n.evidence.event_type === type)?.evidence.evidence_issuer.id;
    expect(typesOf(notifies).sort()).toEqual(
      [
        'submission_accepted',
        'relay_forwarded',
        'relay_accepted',
        'delivery_confirmed',
        'content_handover',
        'retrieval_confirmed',
      ].sort(),
    );
    for (const t of ['submission_accepted', 'relay_forwarded']) expect(issuedBy(t)).toBe(ids[0]);
    for (const t of ['relay_accepted', 'delivery_confirmed', 'content_handover', 'retrieval_confirmed']) {
      expect(issuedBy(t)).toBe(ids[1]);
    }
    const forwarded = notifies.find((n) => n.evidence.event_type === 'relay_forwarded')!.evidence;
    expect(forwarded).toMatchObject({ original_recipient: bobKey.did, details: { next_relay_id: ids[1] } });
    const hash = notifies[0]!.evidence.original_content_hash;
    for (const n of notifies) {
      expect(n.evidence).toMatchObject({ original_message_id: sent.message_id, original_sender: aliceKey.did });
      // The same content hash at both relays: they witnessed the same message.
      expect(n.evidence.original_content_hash).toEqual(hash);
      // Each record verifies against the relay that issued it; relay 1 signed the notify that carried it.
      await expect(verifyEvidence(n.evidence, n.signed_evidence)).resolves.toBeDefined();
      expect(n.wmp.sender).toBe(ids[0]);
    }

    // Relay 1's repository holds relay 2's records too: Alice reads all six there.
    const mine = await getSigned(urls[0], aliceKey, `/evidence?message_id=${sent.message_id}`);
    expect(mine.body.total_count).toBe(6);
    // Bob reads relay 2's records of his delivery at his relay (not relay 1's submission).
    const bobs = await getSigned(urls[1], bobKey, `/evidence?message_id=${sent.message_id}`);
    expect(bobs.body.evidence_records.map((r: { evidence_issuer: { id: string } }) => r.evidence_issuer.id)).toEqual(
      Array(4).fill(ids[1]),
    );
    await alice.peer.close();
    await bob.peer.close();
  }, 240_000);

  it('refuses a message under evidence with -31009 when the recipient relay offers no evidence; nothing stored', async () => {
    const { urls } = await relayPair([[], ['--evidence', 'off']]);
    const [aliceKey, bobKey] = [generateKeypair(), generateKeypair()];
    await publishCard(urls[0], aliceKey);
    await publishCard(urls[1], bobKey);
    const alice = await openClient(urls[0], 'ws', aliceKey, EVIDENCE_CAPABILITIES);
    const bob = await openClient(urls[1], 'ws', bobKey);
    const notifies = collectEvidence(alice);
    const refused = await signedSend(alice, [bobKey.did], 'registered').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: -31009, data: { reason: 'next_relay_without_evidence' } });
    // Refused before anything was stored: relay 1's outbox for relay 2 is empty.
    const gauges = await (await fetch(`${urls[0]}/metrics`)).text();
    for (const m of gauges.matchAll(/^wmp_relay_peer_outbox_messages\{[^}]*\} (\d+)$/gm)) expect(m[1]).toBe('0');
    // Recorded as refused, and Bob can still be reached without evidence (from a session without it).
    await waitFor(() => notifies.length === 1, 30_000);
    expect(typesOf(notifies)).toEqual(['submission_rejected']);
    expect(notifies[0]!.evidence.event_reason).toMatchObject({ details: { error_code: -31009 } });
    const plain = await openClient(urls[0], 'ws', aliceKey);
    await plain.session.send([bobKey.did], 'plain');
    await waitFor(() => bob.inbox.length === 1, 60_000);
    expect(bob.inbox[0]!.body).toBe('plain');
    for (const c of [alice, plain, bob]) await c.peer.close();
  }, 240_000);
});
