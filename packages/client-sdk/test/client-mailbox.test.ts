// The mailbox fallback end to end: a relay that also runs the OHAN box, a sender whose client
// seals what the relay could only queue, and a recipient who gets the message both ways and
// keeps one.
import { describe, expect, it } from 'vitest';
import { Mailbox } from '../src/index.js';
import { connect, mailboxFallback, type ReceivedMessage } from '../src/node.js';
import { endpointOf, FAST_RECONNECT, waitFor } from './client-testbed.js';
import { mailboxTestbed } from './mailbox-relays.js';

const bed = mailboxTestbed();

describe('WmpClient with the mailbox fallback', () => {
  it('seals a message the relay could only queue; the recipient keeps one copy of the two', async () => {
    const relay = await bed.relay({ directory: true, strangerBits: 8 });
    const alice = await bed.party([relay]);
    const carol = await bed.party([relay]);
    const errors: Error[] = [];
    const aliceClient = await connect(endpointOf(relay.origin, 'ws'), {
      identity: alice.identity,
      reconnect: FAST_RECONNECT,
      fallback: mailboxFallback(alice.mailbox, { cardOf: (did) => alice.mailbox.lookupCard(did, relay.origin) }),
    });
    bed.onCleanup(() => aliceClient.close());
    aliceClient.on('error', (e) => {
      errors.push(e);
    });

    // Carol is offline: the relay queues it, and the fallback seals a copy into her box.
    const sent = await aliceClient.send(carol.identity.did, { text: 'sealed too' });
    await waitFor(async () => (await relay.count()) === 1);
    expect(errors).toEqual([]);

    // Carol comes online: the relay copy arrives; the sealed copy, fetched afterwards, is the same message.
    const carolClient = await connect(endpointOf(relay.origin, 'http'), {
      identity: carol.identity,
      reconnect: FAST_RECONNECT,
    });
    bed.onCleanup(() => carolClient.close());
    const inbox: ReceivedMessage[] = [];
    carolClient.on('message', (m) => {
      inbox.push(m);
    });
    await waitFor(() => inbox.length === 1);
    expect(inbox[0]).toMatchObject({
      via: 'relay',
      clientMessageId: sent.clientMessageId,
      body: { text: 'sealed too' },
    });
    const handed: boolean[] = [];
    const fetched = await carol.mailbox.fetch({
      onMessage: async (mail) => {
        handed.push(await carolClient.receiveMail(mail));
      },
    });
    expect(fetched.messages).toHaveLength(1);
    expect(handed).toEqual([false]);
    expect(inbox).toHaveLength(1);

    // No card for the recipient: the fallback fails, reported on `error`; the relay copy stays queued.
    const nobody = new Mailbox({ identity: (await bed.party([relay], { publish: false })).identity });
    await aliceClient.send(nobody.identity.did, 'no card');
    await waitFor(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ name: 'WmpClientError', code: 'ERR_CLIENT_NO_CARD' });
  });
});
