// Delegation at the relay (core §3.3, issue 26): a connection authenticated as delegate D sends
// for principal P only with a `wmp.sender_delegate` whose authorization proves it (a mandate
// signed by P, or an SD-JWT VC presentation naming D), for the action at hand and unexpired;
// every other case is -31015 with its reason and nothing is stored. Recipient-side delegates
// register for their principal. Delegation turned off: -31005. Real WebSocket ports.
import { generateKeypair, type Keypair, type MandateClaims, signMandate } from '@wmp/jcs-signing';
import { ed25519HolderKey, issueSdJwtVc, presentSdJwt, sdJwtDelegationChecker } from '@wmp/session/sd-jwt';
import { afterEach, describe, expect, it } from 'vitest';
import { refusal } from '../../../test-support/code-of.js';
import type { Relay } from '../src/node.js';
import { type Client, openClient, startRelay, waitFor } from './fixtures/relay-clients.js';

const HOUR = 3600_000;
const relays: Relay[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.peer.close().catch(() => undefined);
  for (const r of relays.splice(0)) await r.close();
});

async function relayWith(config: Parameters<typeof startRelay>[0] = {}) {
  const started = await startRelay(config);
  relays.push(started.relay);
  return started;
}

async function client(url: string, keypair?: Keypair, register = true): Promise<Client> {
  const c = await openClient(url, { ...(keypair ? { keypair } : {}), register });
  clients.push(c);
  return c;
}

function mandate(p: Keypair, d: string, over: Partial<MandateClaims> = {}, signer: Keypair = p) {
  const claims = { delegate: d, principal: p.did, scope: ['submit'], valid_until: iso(Date.now() + HOUR), ...over };
  return signMandate(claims, signer);
}

const iso = (ms: number) => new Date(ms).toISOString();

/** `sender_delegate` with a mandate (or another authorization). */
function delegateOf(id: string, credential: string, type = 'mandate', extra: Record<string, unknown> = {}) {
  return { id, authorization: { type, credential, ...extra } };
}

/** A deliver as delegate `d` for principal `principal`. */
function deliverAs(d: Client, principal: string, senderDelegate: unknown, to: string, body: unknown = { n: 1 }) {
  return d.session.request('wmp.message.deliver', {
    wmp: { sender: principal, sender_delegate: senderDelegate },
    to: [to],
    body,
  });
}

describe('delegation: a delegate sends for its principal', () => {
  it('with a mandate signed by the principal: delivered as the principal, the delegate named, statuses to the delegate', async () => {
    const { url, relay } = await relayWith();
    const [p, dKey, bobKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const [d, bob] = [await client(url, dKey), await client(url, bobKey)];
    const credential = await mandate(p, dKey.did);
    const answer = (await deliverAs(d, p.did, delegateOf(dKey.did, credential), bobKey.did)) as { message_id: string };
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.wmp).toMatchObject({
      sender: p.did,
      sender_delegate: { id: dKey.did, authorization: { type: 'mandate', credential } },
      message_id: answer.message_id,
    });
    await waitFor(() => d.statuses.some((s) => s.status === 'delivered' && s.message_id === answer.message_id));
    const doc = await (await fetch(`${url}/.well-known/wmp-configuration`)).json();
    expect(doc.erds).toMatchObject({ delegation: true });
    expect((await relay.stores.queue.stats(bobKey.did)).count).toBe(1);
  });

  it('every bad delegation is -31015 with its reason, and nothing is stored; a plain foreign sender stays -31002', async () => {
    const { url, relay } = await relayWith();
    const [p, q, dKey, other, bobKey] = Array.from({ length: 5 }, () => generateKeypair());
    const d = await client(url, dKey!);
    const bob = bobKey!.did;
    const sub = (credential: string, extra?: Record<string, unknown>) =>
      delegateOf(dKey!.did, credential, 'mandate', extra);
    const good = await mandate(p!, dKey!.did);
    const [h, payload, sig] = good.split('.');
    const widened = Buffer.from(
      JSON.stringify({
        delegate: dKey!.did,
        principal: p!.did,
        scope: ['retrieve', 'submit'],
        valid_until: '2099-01-01T00:00:00Z',
      }),
    ).toString('base64url');
    const cases: [string, Promise<unknown>][] = [
      ['delegate_not_authenticated', deliverAs(d, p!.did, delegateOf(other!.did, good), bob)],
      ['principal_mismatch', deliverAs(d, p!.did, sub(await mandate(p!, dKey!.did, {}, dKey!)), bob)],
      ['principal_mismatch', deliverAs(d, q!.did, sub(good), bob)],
      ['delegate_mismatch', deliverAs(d, p!.did, sub(await mandate(p!, other!.did)), bob)],
      ['out_of_scope', deliverAs(d, p!.did, sub(await mandate(p!, dKey!.did, { scope: ['retrieve'] })), bob)],
      // The unsigned copy beside the credential never widens it: the signed payload rules.
      [
        'out_of_scope',
        deliverAs(d, p!.did, sub(await mandate(p!, dKey!.did, { scope: ['retrieve'] }), { scope: ['submit'] }), bob),
      ],
      [
        'expired',
        deliverAs(d, p!.did, sub(await mandate(p!, dKey!.did, { valid_until: iso(Date.now() - 1000) })), bob),
      ],
      ['bad_signature', deliverAs(d, p!.did, sub(`${h}.${widened}.${sig}`), bob)],
      ['malformed', deliverAs(d, p!.did, sub(`${h}.${payload}`), bob)],
      ['unsupported_type', deliverAs(d, p!.did, delegateOf(dKey!.did, good, 'power_of_attorney'), bob)],
      // Without a `verifiable_presentation` checker configured, presentations are not taken.
      ['unsupported_type', deliverAs(d, p!.did, delegateOf(dKey!.did, 'eyJ~', 'verifiable_presentation'), bob)],
      ['principal_required', deliverAs(d, dKey!.did, sub(good), bob)],
      // Only messages are delegated: a flow started for a principal is no action of a delegate.
      [
        'action_not_delegable',
        d.session.request('wmp.flow.start', {
          wmp: { sender: p!.did, sender_delegate: sub(good) },
          flow_type: 'approval',
          flow_id: 'f1',
          params: {},
        }),
      ],
    ];
    for (const [reason, call] of cases) {
      expect(await refusal(call), reason).toEqual({ code: -31015, data: { reason } });
    }
    // Sender binding for everything else is as strict as ever.
    expect(
      await refusal(d.session.request('wmp.message.deliver', { wmp: { sender: p!.did }, to: [bob], body: {} })),
    ).toMatchObject({ code: -31002 });
    expect((await relay.stores.queue.totals()).count).toBe(0);
  });

  it('with an SD-JWT VC presentation issued by the principal, key-bound to the delegate and bound to its session', async () => {
    const { url } = await relayWith({ registered: { delegationCredentials: sdJwtDelegationChecker() } });
    const [p, dKey, bobKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const [d, bob] = [await client(url, dKey), await client(url, bobKey)];
    const holder = ed25519HolderKey(dKey);
    const issue = (claims: Record<string, unknown>, holderJwk = holder.publicJwk) =>
      issueSdJwtVc({
        issuer: p.did,
        vct: 'https://credentials.example/delegation',
        claims,
        disclosable: [],
        holder: holderJwk,
        signer: { alg: 'EdDSA', kid: p.kid, sign: (data) => p.sign(data) },
        expiresAt: Date.now() + HOUR,
      });
    const present = async (vc: string, nonce = d.session.challenge!, by = holder) =>
      presentSdJwt(vc, { disclose: [], nonce, audience: d.session.id, holder: by });
    const vp = (credential: string) => delegateOf(dKey.did, credential, 'verifiable_presentation');
    const vc = await issue({ sub: dKey.did, scope: ['submit'] });
    await deliverAs(d, p.did, vp(await present(vc)), bobKey.did, { by: 'vp' });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({ body: { by: 'vp' }, wmp: { sender: p.did } });

    const otherHolder = ed25519HolderKey(generateKeypair());
    const cases: [string, () => Promise<unknown>][] = [
      [
        'delegate_mismatch',
        async () =>
          deliverAs(d, p.did, vp(await present(await issue({ sub: bobKey.did, scope: ['submit'] }))), bobKey.did),
      ],
      [
        'out_of_scope',
        async () =>
          deliverAs(d, p.did, vp(await present(await issue({ sub: dKey.did, scope: ['retrieve'] }))), bobKey.did),
      ],
      // Another session's challenge: a presentation copied from elsewhere stops here.
      ['invalid_proof', async () => deliverAs(d, p.did, vp(await present(vc, 'ch-other')), bobKey.did)],
      // Bound to a key that is not the delegate's (whoever holds that key made the key binding).
      [
        'not_key_bound',
        async () => {
          const boundElsewhere = await issue({ sub: dKey.did, scope: ['submit'] }, otherHolder.publicJwk);
          return deliverAs(d, p.did, vp(await present(boundElsewhere, d.session.challenge!, otherHolder)), bobKey.did);
        },
      ],
      // Issued by someone nobody trusts for the principal.
      ['untrusted_issuer', async () => deliverAs(d, generateKeypair().did, vp(await present(vc)), bobKey.did)],
    ];
    for (const [reason, call] of cases) {
      expect(await refusal(call()), reason).toEqual({ code: -31015, data: { reason } });
    }
  });
});

describe('delegation: a recipient-side delegate registers for its principal', () => {
  it("gets the principal's messages on its connection and acknowledges them for it; a submit-only mandate may not", async () => {
    const { url, relay } = await relayWith();
    const [q, dKey, aliceKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const [d, alice] = [await client(url, dKey, false), await client(url, aliceKey)];
    const register = (credential: string) =>
      d.session.request('wmp.relay.register', {
        wmp: { sender: q.did, sender_delegate: delegateOf(dKey.did, credential) },
      });
    expect(await refusal(register(await mandate(q, dKey.did)))).toEqual({
      code: -31015,
      data: { reason: 'out_of_scope' },
    });
    await register(await mandate(q, dKey.did, { scope: ['retrieve'] }));
    await alice.session.request('wmp.message.deliver', { to: [q.did], body: { for: 'q' } });
    await waitFor(() => d.inbox.length === 1);
    expect(d.inbox[0]).toMatchObject({ to: [q.did], body: { for: 'q' }, wmp: { sender: aliceKey.did } });
    await d.session.notify('wmp.message.ack', { message_ids: [d.inbox[0]!.wmp.message_id], status: 'received' });
    await waitFor(async () => (await relay.stores.queue.stats(q.did)).count === 0);
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'));
  });
});

describe('delegation turned off by the operator', () => {
  it('advertises delegation: false and refuses a message asking for it with -31005, never as a plain one', async () => {
    const { url, relay } = await relayWith({ registered: { delegation: false } });
    const [p, dKey, bobKey] = [generateKeypair(), generateKeypair(), generateKeypair()];
    const d = await client(url, dKey);
    const doc = await (await fetch(`${url}/.well-known/wmp-configuration`)).json();
    expect(doc.erds).toMatchObject({ delegation: false });
    const credential = await mandate(p, dKey.did);
    expect(await refusal(deliverAs(d, p.did, delegateOf(dKey.did, credential), bobKey.did))).toEqual({
      code: -31005,
      data: { capability: 'erds', unsupported: ['delegation'] },
    });
    // Even naming itself as sender, a message that asks for delegation is not taken as plain.
    expect(await refusal(deliverAs(d, dKey.did, delegateOf(dKey.did, credential), bobKey.did))).toMatchObject({
      code: -31005,
    });
    expect((await relay.stores.queue.totals()).count).toBe(0);
  });
});
