import { fromHex } from '@wmp/jcs-signing';
import { createEvent, generateEncKeypair, leadingZeroBits } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { Identity, Mailbox, MailboxError, type MailMessage, MemoryClientStore } from '../src/index.js';
import { deliver, mailboxTestbed, waitFor } from './mailbox-relays.js';

const bed = mailboxTestbed();

function bodies(messages: readonly MailMessage[]): unknown[] {
  return messages.map((m) => (m.envelope as unknown as { params: { body: unknown } }).params.body);
}

describe('Mailbox cards', () => {
  it('publishes a card to each relay on it and looks it up, verified', async () => {
    const [r1, r2] = [await bed.relay(), await bed.relay()];
    const bob = await bed.party([r1!, r2!], { publish: false });
    const { card, outcomes } = await bob.mailbox.publishCard([r1!.origin, r2!.origin]);
    expect(outcomes).toEqual([
      { relay: r1!.origin, ok: true, status: 'stored' },
      { relay: r2!.origin, ok: true, status: 'stored' },
    ]);
    expect(card).toMatchObject({
      key: bob.identity.signingKey,
      enc: bob.identity.encKey,
      relays: [r1!.origin, r2!.origin],
    });
    expect(await bob.mailbox.card()).toEqual(card);
    expect(await bob.mailbox.relays()).toEqual([r1!.origin, r2!.origin]);

    const alice = await bed.party([r1!]);
    expect(await alice.mailbox.lookupCard(bob.identity.did, r2!.origin)).toEqual(card);
    expect(await alice.mailbox.lookupCard(bob.identity.signingKey, r1!.origin)).toEqual(card);
    expect(await alice.mailbox.lookupCard(Identity.generate().did, r1!.origin)).toBeUndefined();
    await expect(alice.mailbox.lookupCard('did:web:example.com', r1!.origin)).rejects.toMatchObject({
      code: 'invalid_key',
    });
  });

  it('reports a relay-only box, which keeps no cards, per relay', async () => {
    const [directory, relayOnly] = [await bed.relay(), await bed.relay({ directory: false })];
    const bob = await bed.party([], { publish: false });
    const { outcomes } = await bob.mailbox.publishCard([directory.origin, relayOnly.origin]);
    expect(outcomes[0]).toEqual({ relay: directory.origin, ok: true, status: 'stored' });
    expect(outcomes[1]).toMatchObject({
      relay: relayOnly.origin,
      ok: false,
      error: { code: 'not_found', status: 404 },
    });
    // The card is kept all the same: it names this mailbox's relays.
    expect(await bob.mailbox.relays()).toEqual([directory.origin, relayOnly.origin]);
  });

  it('keeps a card only once a box took it: one that no box took leaves the card before', async () => {
    const relay = await bed.relay();
    const dead = await bed.relay();
    const deadOrigin = dead.origin;
    await dead.close();
    const bob = await bed.party([relay]);
    const before = await bob.mailbox.card();
    const failed = await bob.mailbox.publishCard([deadOrigin]);
    expect(failed.saved).toBe(false);
    expect(failed.outcomes).toMatchObject([{ relay: deadOrigin, ok: false, error: { code: 'network' } }]);
    expect(await bob.mailbox.card()).toEqual(before);
    expect(await bob.mailbox.relays()).toEqual([relay.origin]);
    // One of two took it: that card is out there, so it is the one kept.
    const half = await bob.mailbox.publishCard([relay.origin, deadOrigin]);
    expect(half.saved).toBe(true);
    expect(await bob.mailbox.relays()).toEqual([relay.origin, deadOrigin]);
  });

  it('refuses bad relay lists and has no relays before a card or the option', async () => {
    const mailbox = new Mailbox({ identity: Identity.generate() });
    await expect(mailbox.relays()).rejects.toMatchObject({ code: 'no_relays' });
    await expect(mailbox.fetch()).rejects.toMatchObject({ code: 'no_relays' });
    await expect(mailbox.publishCard(['http://example.com'])).rejects.toMatchObject({ code: 'invalid_card' });
    await expect(mailbox.publishCard([])).rejects.toMatchObject({ code: 'invalid_card' });
    expect(() => new Mailbox({ identity: Identity.generate(), relays: ['https://a.example/path'] })).toThrow(
      MailboxError,
    );
  });
});

describe('Mailbox send and fetch', () => {
  it('delivers once through two relays on one card: deduplicated, acknowledged on both', async () => {
    const [r1, r2] = [await bed.relay(), await bed.relay()];
    const bob = await bed.party([r1!, r2!]);
    const alice = await bed.party([r1!, r2!]);
    const card = (await alice.mailbox.lookupCard(bob.identity.did, r1!.origin))!;

    const sent = await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'Lunch on Friday?'));
    expect(sent.accepted).toBe(true);
    expect(sent.outcomes.map((o) => [o.relay, o.ok && o.status, o.ok && o.stampBits])).toEqual([
      [r1!.origin, 'stored', 8],
      [r2!.origin, 'stored', 8],
    ]);
    const [o1, o2] = sent.outcomes;
    expect(o1!.eventId).toBe(o2!.eventId); // one event, published to both
    expect(leadingZeroBits(fromHex(o1!.eventId!))).toBeGreaterThanOrEqual(8);
    expect([await r1!.count(), await r2!.count()]).toEqual([1, 1]);

    const first = await bob.mailbox.fetch();
    expect(first.errors).toEqual([]);
    expect(first.rejected).toEqual([]);
    expect(bodies(first.messages)).toEqual(['Lunch on Friday?']);
    expect(first.messages[0]).toMatchObject({
      eventId: o1!.eventId,
      from: alice.identity.did,
      fromKey: alice.identity.signingKey,
      relay: r1!.origin,
      envelope: { jsonrpc: '2.0', id: 'm-Lunch on Friday?', method: 'wmp.message.deliver' },
    });
    // Acknowledged on both relays: the copy on r2 was recognised as the same event.
    expect([await r1!.count(), await r2!.count()]).toEqual([0, 0]);

    const second = await bob.mailbox.fetch();
    expect(second).toEqual({ messages: [], rejected: [], errors: [], more: false });
  });

  it('deduplicates the same envelope in two different events (a resend) by envelope id', async () => {
    const r = await bed.relay();
    const bob = await bed.party([r]);
    const alice = await bed.party([r]);
    const card = (await bob.mailbox.card())!;
    const envelope = deliver(alice.identity, bob.identity, 'once', 'req-1');
    await alice.mailbox.send(card, envelope);
    await alice.mailbox.send(card, envelope); // sealed again: another event id
    await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'other', 'req-2'));
    const { messages } = await bob.mailbox.fetch();
    expect(bodies(messages)).toEqual(['once', 'other']);
    expect(await r.count()).toBe(0);
  });

  it('stamps for strangers at the box’s stranger bits; contacts on the allow list go without', async () => {
    const r = await bed.relay({ strangerBits: 6 });
    const bob = await bed.party([r]);
    const alice = await bed.party([r]);
    const card = (await bob.mailbox.card())!;

    // An unstamped event from a stranger is refused by the box.
    const unstamped = await createEvent({
      envelope: deliver(alice.identity, bob.identity, 'x'),
      to: card,
      from: alice.identity.keypair,
    });
    const [refused] = await alice.mailbox.publishEvent(unstamped, [r.origin]);
    expect(refused).toMatchObject({ ok: false, error: { code: 'stamp_required', status: 403, relay: r.origin } });

    const asStranger = await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'stranger'));
    expect(asStranger.outcomes[0]).toMatchObject({ ok: true, status: 'stored', stampBits: 6 });

    const added = await bob.mailbox.allow.add([alice.identity.did]);
    expect(added).toEqual([{ relay: r.origin, ok: true, contacts: [alice.identity.signingKey] }]);
    expect(await bob.mailbox.allow.list()).toEqual([alice.identity.signingKey]);
    const asContact = await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'contact'), {
      asContact: true,
    });
    expect(asContact.outcomes[0]).toMatchObject({ ok: true, status: 'stored', stampBits: 0 });

    // Off the list again: the unstamped try is refused, and a stamped event goes in its place.
    expect(await bob.mailbox.allow.remove([alice.identity.signingKey])).toEqual([
      { relay: r.origin, ok: true, contacts: [] },
    ]);
    const fallback = await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'fallback'), {
      asContact: true,
    });
    expect(fallback.outcomes[0]).toMatchObject({ ok: true, status: 'stored', stampBits: 6 });

    expect(bodies((await bob.mailbox.fetch()).messages)).toEqual(['stranger', 'contact', 'fallback']);
    await expect(bob.mailbox.allow.add(['z6Mknot-a-key'])).rejects.toMatchObject({ code: 'invalid_key' });
  });

  it('refuses to mint above maxStampBits, and reports it per relay', async () => {
    const r = await bed.relay({ strangerBits: 20 });
    const bob = await bed.party([r]);
    const alice = await bed.party([r], { maxStampBits: 12 });
    const sent = await alice.mailbox.send((await bob.mailbox.card())!, deliver(alice.identity, bob.identity, 'x'));
    expect(sent.accepted).toBe(false);
    expect(sent.outcomes[0]).toMatchObject({ ok: false, error: { code: 'stamp_too_costly', relay: r.origin } });
    expect(await r.count()).toBe(0);
  });

  it('refuses a forged card, an envelope naming another sender, and a non-message', async () => {
    const r = await bed.relay();
    const bob = await bed.party([r]);
    const alice = await bed.party([r]);
    const card = (await bob.mailbox.card())!;
    const forged = { ...card, enc: generateEncKeypair().multikey };
    await expect(alice.mailbox.send(forged, deliver(alice.identity, bob.identity, 'x'))).rejects.toMatchObject({
      code: 'invalid_card',
      reason: 'signature',
    });
    await expect(alice.mailbox.send({ card }, deliver(bob.identity, bob.identity, 'x'))).rejects.toMatchObject({
      code: 'invalid_envelope',
    });
    await expect(alice.mailbox.send(card, { hello: 'world' })).rejects.toMatchObject({ code: 'invalid_envelope' });
    expect(await r.count()).toBe(0);
  });

  it('cancels a send with its signal', async () => {
    const r = await bed.relay({ strangerBits: 24 });
    const bob = await bed.party([r]);
    const alice = await bed.party([r]);
    const abort = new AbortController();
    const reason = new Error('user cancelled');
    const sending = alice.mailbox.send((await bob.mailbox.card())!, deliver(alice.identity, bob.identity, 'x'), {
      signal: abort.signal,
      onProgress: () => abort.abort(reason),
    });
    await expect(sending).rejects.toBe(reason);
    expect(await r.count()).toBe(0);
  });

  it('goes on with the other relays when one is down, for send and fetch', async () => {
    const [up, down] = [await bed.relay(), await bed.relay()];
    const bob = await bed.party([up, down]);
    const alice = await bed.party([up]);
    const card = (await bob.mailbox.card())!;
    await down.close();
    const sent = await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'still'));
    expect(sent.accepted).toBe(true);
    expect(sent.outcomes.map((o) => (o.ok ? o.status : o.error.code))).toEqual(['stored', 'network']);
    const fetched = await bob.mailbox.fetch();
    expect(bodies(fetched.messages)).toEqual(['still']);
    expect(fetched.errors.map((e) => [e.code, e.relay])).toEqual([['network', down.origin]]);
  });
});

describe('Mailbox refuses bad events', () => {
  it('reports and removes a signed event it cannot open; never hands it over', async () => {
    const r = await bed.relay();
    const bob = await bed.party([r]);
    const carol = await bed.party([r]);
    const card = (await bob.mailbox.card())!;
    // Validly signed and stamped by Carol, so the box takes it, but sealed to another enc key.
    const wrongKey = await createEvent({
      envelope: deliver(carol.identity, bob.identity, 'unreadable'),
      to: { key: card.key, enc: generateEncKeypair().multikey },
      from: carol.identity.keypair,
      stampBits: 8,
    });
    // And an envelope claiming to come from someone else than its signer.
    const spoofed = await createEvent({
      envelope: deliver(Identity.generate(), bob.identity, 'spoofed'),
      to: card,
      from: carol.identity.keypair,
      stampBits: 8,
    });
    const good = deliver(carol.identity, bob.identity, 'fine');
    for (const event of [wrongKey, spoofed]) {
      expect((await carol.mailbox.publishEvent(event, [r.origin]))[0]).toMatchObject({ ok: true, status: 'stored' });
    }
    await carol.mailbox.send(card, good);

    const handed: MailMessage[] = [];
    const result = await bob.mailbox.fetch({ onMessage: (m) => void handed.push(m) });
    expect(bodies(handed)).toEqual(['fine']);
    expect(bodies(result.messages)).toEqual(['fine']);
    expect(result.rejected).toEqual([
      { relay: r.origin, eventId: wrongKey.id, reason: 'decrypt' },
      { relay: r.origin, eventId: spoofed.id, reason: 'sender_mismatch' },
    ]);
    expect(await r.count()).toBe(0);
  });
});

describe('Mailbox state', () => {
  it('hands a message over again when the application’s handler throws, then once', async () => {
    const r = await bed.relay();
    const bob = await bed.party([r]);
    const alice = await bed.party([r]);
    const card = (await bob.mailbox.card())!;
    for (const body of ['one', 'two', 'three'])
      await alice.mailbox.send(card, deliver(alice.identity, bob.identity, body));
    const failure = new Error('disk full');
    const seen: unknown[] = [];
    await expect(
      bob.mailbox.fetch({
        onMessage: (m) => {
          seen.push(bodies([m])[0]);
          if (seen.length === 2) throw failure;
        },
      }),
    ).rejects.toBe(failure);
    expect(await r.count()).toBe(2); // 'one' was acknowledged; 'two' failed; 'three' was not reached
    const again = await bob.mailbox.fetch();
    expect(bodies(again.messages)).toEqual(['two', 'three']);
    expect(await r.count()).toBe(0);
  });

  it('watches a live stream: a message published while watching arrives, once, and is acknowledged', async () => {
    const [r1, r2] = [await bed.relay(), await bed.relay()];
    const bob = await bed.party([r1!, r2!]);
    const alice = await bed.party([r1!, r2!]);
    const card = (await bob.mailbox.card())!;
    await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'before'));

    const received: MailMessage[] = [];
    const errors: unknown[] = [];
    const watch = await bob.mailbox.watch({ onMessage: (m) => void received.push(m), onError: (e) => errors.push(e) });
    bed.onCleanup(() => watch.close());
    expect([r1!.box.openStreams, r2!.box.openStreams]).toEqual([1, 1]);
    await waitFor(() => received.length === 1); // queued before the watch: replayed from the cursor
    await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'live'));
    await waitFor(() => received.length === 2);
    await waitFor(async () => (await r1!.count()) + (await r2!.count()) === 0);
    expect(bodies(received)).toEqual(['before', 'live']);
    expect(errors).toEqual([]);
    await watch.close();
    // The box sees the streams end when their connections close.
    await waitFor(() => r1!.box.openStreams + r2!.box.openStreams === 0);
    expect((await bob.mailbox.fetch()).messages).toEqual([]);
  });

  it('keeps cursors and pending acknowledgements across a new Mailbox on the same FileStore', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { FileStore } = await import('../src/node.js');
    const dir = mkdtempSync(join(tmpdir(), 'wmp-mailbox-'));
    bed.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    const r = await bed.relay();
    const identity = Identity.generate();
    // The first instance cannot acknowledge: its POST /delivered never reaches the box.
    const offline: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/ohan/v1/delivered')) throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    const first = await bed.party([r], { identity, store: new FileStore(dir), fetch: offline });
    const alice = await bed.party([r]);
    const card = (await first.mailbox.card())!;
    await alice.mailbox.send(card, deliver(alice.identity, identity, 'one'));
    const got = await first.mailbox.fetch();
    expect(bodies(got.messages)).toEqual(['one']);
    expect(got.errors.map((e) => e.code)).toEqual(['network']);
    expect(await r.count()).toBe(1);

    const second = new Mailbox({ identity, store: new FileStore(dir) });
    expect(await second.relays()).toEqual([r.origin]);
    const stored = JSON.parse((await new FileStore(dir).get(`mailbox/relay/${r.origin}`))!);
    expect(stored).toEqual({ after: 1, ack: [got.messages[0]!.eventId] });
    const again = await second.fetch();
    expect(again).toEqual({ messages: [], rejected: [], errors: [], more: false });
    expect(await r.count()).toBe(0); // the pending acknowledgement went out first
    await alice.mailbox.send(card, deliver(alice.identity, identity, 'two'));
    expect(bodies((await second.fetch()).messages)).toEqual(['two']);
    expect(JSON.parse((await new FileStore(dir).get(`mailbox/relay/${r.origin}`))!)).toEqual({ after: 2, ack: [] });
  });

  it('keeps deduplicating across instances on one store', async () => {
    const r = await bed.relay();
    const store = new MemoryClientStore();
    const identity = Identity.generate();
    const bob = await bed.party([r], { identity, store });
    const alice = await bed.party([r]);
    const card = (await bob.mailbox.card())!;
    const envelope = deliver(alice.identity, identity, 'only once', 7);
    await alice.mailbox.send(card, envelope);
    expect(bodies((await bob.mailbox.fetch()).messages)).toEqual(['only once']);
    await alice.mailbox.send(card, envelope);
    const later = new Mailbox({ identity, store });
    expect((await later.fetch()).messages).toEqual([]);
    expect(await r.count()).toBe(0);
  });
});
