// Registered delivery from the SDK (core §3.3, §3.5, docs/wmp-profile.md "Consignment"), through
// a real relay on a real port: a consented message reaches the recipient as a `notice` without
// its content, then as a `message` once it accepts (signed for `consented_signed`, the receipt);
// a rejection drops it; `deliverAfter` holds it at the relay; a delegate sends for its principal
// with a mandate.
import { signMandate } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import type { ConsignmentNotice, MessageStatusEvent } from '../src/index.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();

async function pair() {
  const { url, relay } = await bed.relay({ config: { timings: { scheduleIntervalMs: 50 } } });
  const alice = await bed.client(url);
  const bob = await bed.client(url);
  const notices: ConsignmentNotice[] = [];
  bob.client.on('notice', (n) => {
    notices.push(n);
  });
  const statuses: MessageStatusEvent[] = [];
  alice.client.on('status', (s) => {
    statuses.push(s);
  });
  return { url, relay, alice, bob, notices, statuses };
}

describe('consignment from the SDK', () => {
  it('consented: a notice without the content, then the message once accepted; the sender hears delivered', async () => {
    const { alice, bob, notices, statuses } = await pair();
    const sent = await alice.client.send(
      bob.identity.did,
      { terms: 'secret' },
      { consignmentMode: 'consented', subject: 'contract' },
    );
    await waitFor(() => notices.length === 1);
    expect(notices[0]).toMatchObject({
      messageId: sent.messageId,
      from: alice.identity.did,
      mode: 'consented',
      subject: 'contract',
      recipient: bob.identity.did,
      contentHash: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(bob.inbox).toEqual([]);
    expect(await bob.client.accept(notices[0]!)).toBe('accepted');
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({ id: sent.messageId, from: alice.identity.did, body: { terms: 'secret' } });
    await waitFor(() => statuses.some((s) => s.messageId === sent.messageId && s.status === 'delivered'));
  });

  it('consented_signed: the acceptance is signed over the content hash; unsigned it is refused', async () => {
    const { relay, alice, bob, notices } = await pair();
    const sent = await alice.client.send(bob.identity.did, 'sign for it', { consignmentMode: 'consented_signed' });
    await waitFor(() => notices.length === 1);
    // Unsigned (sign: false) the relay refuses it: -31010, nothing handed over.
    await expect(bob.client.accept(notices[0]!, { sign: false })).rejects.toMatchObject({ code: -31010 });
    expect(await bob.client.accept(notices[0]!)).toBe('accepted');
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({ id: sent.messageId, body: 'sign for it' });
    expect((await relay.stores.queue.stats(`held:${bob.identity.did}`)).count).toBe(0);
  });

  it('a rejection drops the message; its sender hears dropped / recipient_rejected', async () => {
    const { alice, bob, notices, statuses } = await pair();
    const sent = await alice.client.send(bob.identity.did, 'no thanks', { consignmentMode: 'consented' });
    await waitFor(() => notices.length === 1);
    await bob.client.reject(notices[0]!, { reason: 'not expected' });
    await waitFor(() => statuses.some((s) => s.messageId === sent.messageId && s.status === 'dropped'));
    expect(statuses.find((s) => s.status === 'dropped')?.reason).toBe('recipient_rejected');
    await expect(bob.client.accept(sent.messageId!)).rejects.toMatchObject({ code: -32602 });
    expect(bob.inbox).toEqual([]);
  });

  it('deliverAfter: held at the relay, handed over once due', async () => {
    const { relay, alice, bob } = await pair();
    const due = Date.now() + 800;
    const sent = await alice.client.send(bob.identity.did, 'later', { deliverAfter: new Date(due) });
    expect(sent.status).toBe('queued');
    expect((await relay.stores.queue.stats(`sched:${bob.identity.did}`)).count).toBe(1);
    await waitFor(() => bob.inbox.length === 1, 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(due);
    expect(bob.inbox[0]).toMatchObject({ id: sent.messageId, body: 'later' });
  });

  it('onBehalfOf: a delegate sends for its principal with a mandate; the recipient sees the principal', async () => {
    const { url, bob } = await pair();
    const principal = await bed.client(url);
    const delegate = await bed.client(url);
    const credential = await signMandate(
      {
        delegate: delegate.identity.did,
        principal: principal.identity.did,
        scope: ['submit'],
        valid_until: new Date(Date.now() + 3600_000).toISOString(),
      },
      principal.identity.keypair,
    );
    await delegate.client.send(bob.identity.did, 'for my principal', {
      onBehalfOf: { principal: principal.identity.did, authorization: { type: 'mandate', credential } },
    });
    // Signed, the signature is the delegate's: the recipient is told it held, and who signed.
    await delegate.client.send(bob.identity.did, 'signed for my principal', {
      sign: true,
      onBehalfOf: { principal: principal.identity.did, authorization: { type: 'mandate', credential } },
    });
    await waitFor(() => bob.inbox.length === 2);
    expect(bob.inbox[0]).toMatchObject({ from: principal.identity.did, body: 'for my principal' });
    expect(bob.inbox[0]!.params).toMatchObject({ wmp: { sender_delegate: { id: delegate.identity.did } } });
    expect(bob.inbox[1]!.signature).toEqual({ signer: delegate.identity.did, valid: true, alg: 'EdDSA' });
    // A mandate for another delegate does not hold: -31015.
    const other = await bed.client(url);
    await expect(
      other.client.send(bob.identity.did, 'not mine', {
        onBehalfOf: { principal: principal.identity.did, authorization: { type: 'mandate', credential } },
      }),
    ).rejects.toMatchObject({ code: -31015 });
  });
});
