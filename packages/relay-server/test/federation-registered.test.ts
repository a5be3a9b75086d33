// Registered delivery across two federated relays (issue 26): a delegate's message is checked
// again by the recipient's relay (sender binding for a delegated sender), consignment and
// scheduled delivery happen at the recipient's relay, and what the peer's `erds` does not
// advertise is refused at the sender's relay (-31005). Two relays on real ports.
import { generateKeypair, type Keypair, signMandate } from '@wmp/jcs-signing';
import { ed25519HolderKey, issueSdJwtVc, presentSdJwt, sdJwtDelegationChecker } from '@wmp/session/sd-jwt';
import { describe, expect, it } from 'vitest';
import { refusal } from '../../../test-support/code-of.js';
import type { RelayConfig } from '../src/node.js';
import { federationTestbed } from './fixtures/federation.js';
import { waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();
const HOUR = 3600_000;

/**
 * Two relays, peers of each other; Bob's home is relay 2 (a route at relay 1), the sender's
 * relay 1 (a route at relay 2: relay 1 may speak for it).
 */
function twoRelays(
  bob: string,
  sender: string,
  registered: (i: number) => RelayConfig['registered'] = () => undefined,
) {
  return bed.setup(2, (i, urls) => {
    const own = registered(i);
    return {
      federation: {
        peers: [urls[1 - i]!],
        routes: [{ pattern: i === 0 ? bob : sender, url: urls[1 - i]! }],
        timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
      timings: { scheduleIntervalMs: 50 },
      ...(own ? { registered: own } : {}),
    };
  });
}

const mandateFor = (p: Keypair, d: string) =>
  signMandate(
    { delegate: d, principal: p.did, scope: ['submit'], valid_until: new Date(Date.now() + HOUR).toISOString() },
    p,
  );

describe('federation: delegated senders', () => {
  it('a delegate at relay 1 sends for its principal to Bob at relay 2, which checks the mandate too; statuses go back to the delegate', async () => {
    const [p, dKey, bobKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(bobKey.did, dKey.did);
    const bob = await bed.open(u2!, { keypair: bobKey });
    const d = await bed.open(u1!, { keypair: dKey });
    const credential = await mandateFor(p, dKey.did);
    const { message_id } = (await d.session.request('wmp.message.deliver', {
      wmp: { sender: p.did, sender_delegate: { id: dKey.did, authorization: { type: 'mandate', credential } } },
      to: [bobKey.did],
      body: { for: 'the principal' },
    })) as { message_id: string };
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.wmp).toMatchObject({ sender: p.did, sender_delegate: { id: dKey.did }, message_id });
    expect(bob.inbox[0]!.wmp.relay_chain).toHaveLength(2);
    await waitFor(() => d.statuses.some((s) => s.status === 'delivered' && s.message_id === message_id));
  });

  it('relay 2 binds the delegate, not the principal: a delegate relay 1 may not speak for is refused there', async () => {
    const [p, dKey, bobKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    // Relay 2 knows relay 1 as the home of the principal, not of the delegate.
    const [u1, u2] = await twoRelays(bobKey.did, p.did);
    const bob = await bed.open(u2!, { keypair: bobKey });
    const d = await bed.open(u1!, { keypair: dKey });
    const credential = await mandateFor(p, dKey.did);
    const { message_id } = (await d.session.request('wmp.message.deliver', {
      wmp: { sender: p.did, sender_delegate: { id: dKey.did, authorization: { type: 'mandate', credential } } },
      to: [bobKey.did],
      body: {},
    })) as { message_id: string };
    await waitFor(() => d.statuses.some((s) => s.status === 'dropped' && s.message_id === message_id));
    expect(d.statuses.find((s) => s.status === 'dropped')).toMatchObject({
      reason: 'peer_refused',
      data: { code: -31002, reason: 'peer_may_not_speak_for_sender' },
    });
    expect(bob.inbox).toEqual([]);
  });

  it('a presentation relay 2 cannot check (no checker there) is refused by relay 2: dropped / peer_refused / -31015', async () => {
    const [p, dKey, bobKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const checker = sdJwtDelegationChecker();
    const [u1, u2] = await twoRelays(bobKey.did, dKey.did, (i) =>
      i === 0 ? { delegationCredentials: checker } : undefined,
    );
    const bob = await bed.open(u2!, { keypair: bobKey });
    const d = await bed.open(u1!, { keypair: dKey });
    const holder = ed25519HolderKey(dKey);
    const vc = await issueSdJwtVc({
      issuer: p.did,
      vct: 'https://credentials.example/delegation',
      claims: { sub: dKey.did, scope: ['submit'] },
      disclosable: [],
      holder: holder.publicJwk,
      signer: { alg: 'EdDSA', kid: p.kid, sign: (data) => p.sign(data) },
      expiresAt: Date.now() + HOUR,
    });
    const vp = await presentSdJwt(vc, { disclose: [], nonce: d.session.challenge!, audience: d.session.id, holder });
    const { message_id } = (await d.session.request('wmp.message.deliver', {
      wmp: {
        sender: p.did,
        sender_delegate: { id: dKey.did, authorization: { type: 'verifiable_presentation', credential: vp } },
      },
      to: [bobKey.did],
      body: {},
    })) as { message_id: string };
    await waitFor(() => d.statuses.some((s) => s.status === 'dropped' && s.message_id === message_id));
    expect(d.statuses.find((s) => s.status === 'dropped')).toMatchObject({
      recipient: bobKey.did,
      reason: 'peer_refused',
      data: { code: -31015, reason: 'unsupported_type' },
    });
    expect(bob.inbox).toEqual([]);
    expect((await bed.relays[1]!.stores.queue.stats(bobKey.did)).count).toBe(0);
  });

  it("relay 2 with delegation off: relay 1 refuses a delegated message for it with -31005, from relay 2's erds", async () => {
    const [p, dKey, bobKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(bobKey.did, dKey.did, (i) => (i === 1 ? { delegation: false } : undefined));
    await bed.open(u2!, { keypair: bobKey });
    const d = await bed.open(u1!, { keypair: dKey });
    const credential = await mandateFor(p, dKey.did);
    expect(
      await refusal(
        d.session.request('wmp.message.deliver', {
          wmp: { sender: p.did, sender_delegate: { id: dKey.did, authorization: { type: 'mandate', credential } } },
          to: [bobKey.did],
          body: {},
        }),
      ),
    ).toEqual({ code: -31005, data: { capability: 'erds', unsupported: ['delegation'] } });
    expect((await bed.relays[0]!.stores.queue.totals()).count).toBe(0);
  });
});

describe("federation: consignment and scheduling at the recipient's relay", () => {
  it('consented from relay 1 to Bob at relay 2: the notice and the consent at relay 2, delivered reaches Alice at relay 1', async () => {
    const [aliceKey, bobKey] = [generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(bobKey.did, aliceKey.did);
    const bob = await bed.open(u2!, { keypair: bobKey });
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const notices: Record<string, any>[] = [];
    bob.session.on('notification', ({ method, params }) => method === 'wmp.message.notice' && notices.push(params));
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      to: [bobKey.did],
      body: { registered: 'letter' },
      consignment_mode: 'consented',
    })) as { message_id: string };
    await waitFor(() => notices.length === 1);
    expect(notices[0]).toMatchObject({ message_id, sender: aliceKey.did, consignment_mode: 'consented' });
    expect(notices[0]!.wmp.sender).toBe(bed.relays[1]!.id);
    expect(bob.inbox).toEqual([]);
    await bob.session.request('wmp.message.accept', { message_id });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.body).toEqual({ registered: 'letter' });
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered' && s.message_id === message_id));
  });

  it('deliver_after from relay 1: forwarded at once, held at relay 2 until due', async () => {
    const [aliceKey, bobKey] = [generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(bobKey.did, aliceKey.did);
    const bob = await bed.open(u2!, { keypair: bobKey });
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const due = Date.now() + 1500;
    await alice.session.request('wmp.message.deliver', {
      wmp: { deliver_after: new Date(due).toISOString() },
      to: [bobKey.did],
      body: { at: 'due' },
    });
    await waitFor(async () => (await bed.relays[1]!.stores.queue.stats(`sched:${bobKey.did}`)).count === 1);
    expect(bob.inbox).toEqual([]);
    await waitFor(() => bob.inbox.length === 1, 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(due);
    expect(bob.inbox[0]!.body).toEqual({ at: 'due' });
  });
});
