import { randomBytes } from '@wmp/jcs-signing';
import { ParticipantNotFoundError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import { Identity } from '../src/identity/identity.js';
import { type WmpClient, WmpClientError } from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();

describe('group sessions at the relay', () => {
  it('three participants: create, join (one over HTTP), members, send to all or some, backlog for a late joiner', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url, { binding: 'http' });
    const carolIdentity = Identity.generate();

    const group = await alice.client.createGroup([bob.identity.did, carolIdentity.did]);
    expect(group.id).toMatch(/^ses-/);
    expect(group.id).not.toBe(alice.client.sessionId);
    expect(group.members).toEqual([alice.identity.did, bob.identity.did, carolIdentity.did]);
    expect(alice.client.group(group.id)).toBe(group);

    const bobGroup = await bob.client.joinGroup(group.id);
    expect([...bobGroup.members].sort()).toEqual([alice.identity.did, bob.identity.did, carolIdentity.did].sort());

    // Carol is offline: Bob gets it live on the group session, Carol's copy waits in her queue
    // (one recipient online: the answer says it is being forwarded).
    const first = await group.send({ text: 'hello group' });
    expect(first.status).toBe('accepted');
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({ group: group.id, sessionId: group.id, from: alice.identity.did });

    // Carol comes online and joins: the backlog follows.
    const carol = await bed.client(url, { identity: carolIdentity });
    const carolGroup = await carol.client.joinGroup(group.id);
    await waitFor(() => carol.inbox.length === 1);
    expect(carol.inbox[0]).toMatchObject({ id: first.messageId, group: group.id, body: { text: 'hello group' } });

    // Bob (over HTTP) answers the group; then only Alice.
    await bobGroup.send('reply to all');
    await bobGroup.send('only alice', { to: [alice.identity.did] });
    await waitFor(() => alice.inbox.length === 2 && carol.inbox.length === 2);
    expect(alice.inbox.map((m) => m.body)).toEqual(['reply to all', 'only alice']);
    expect(carol.inbox.map((m) => m.body)).toEqual([{ text: 'hello group' }, 'reply to all']);
    await carolGroup.send('carol here');
    await waitFor(() => alice.inbox.length === 3 && bob.inbox.length === 2);
    // A last group message is the marker: Bob's own, or a copy of anything, would come before it.
    await group.send('end');
    await waitFor(() => bob.inbox.length === 3 && carol.inbox.length === 3);
    expect(bob.inbox.map((m) => m.body)).toEqual([{ text: 'hello group' }, 'carol here', 'end']);
    expect(carol.inbox.map((m) => m.body)).toEqual([{ text: 'hello group' }, 'reply to all', 'end']);
    expect(bob.inbox.every((m) => m.group === group.id)).toBe(true);

    // Someone outside the group: -31008 for a recipient, and nobody can join who is not listed.
    const mallory = await bed.client(url);
    await expect(group.send('x', { to: [mallory.identity.did] })).rejects.toBeInstanceOf(ParticipantNotFoundError);
    await expect(mallory.client.joinGroup(group.id)).rejects.toMatchObject({ code: -31002 });
    expect(mallory.client.groups).toEqual([]);
  });

  it('group sessions are resumed after a relay restart, and closing one ends it for everyone', async () => {
    const seed = randomBytes(32);
    const first = await bed.relay({ sqlite: 'groups.db', seed });
    const alice = await bed.client(first.url);
    const bob = await bed.client(first.url, { binding: 'http' });
    const group = await alice.client.createGroup([bob.identity.did]);
    const bobGroup = await bob.client.joinGroup(group.id);

    const reconnected = (c: WmpClient) =>
      new Promise<void>((resolve) => {
        const off = c.on('state', (s) => {
          if (s.state === 'connected') {
            off();
            resolve();
          }
        });
      });
    const back = reconnected(alice.client);
    await first.close();
    const second = await bed.relay({ sqlite: 'groups.db', seed, port: first.port });
    // Alice's WebSocket dropped: she reconnects and resumes. Bob's HTTP session carries on (its
    // token is keyed by the relay key, which the restarted relay has too): he may never notice.
    await back;
    expect(alice.client.group(group.id)).toBe(group);
    await bobGroup.send('after the restart');
    await waitFor(() => alice.inbox.length === 1);
    expect(alice.inbox[0]).toMatchObject({ group: group.id, body: 'after the restart', from: bob.identity.did });

    await group.close();
    expect(group.closed).toBe(true);
    expect(alice.client.groups).toEqual([]);
    await expect(group.send('after close')).rejects.toMatchObject({ code: 'ERR_CLIENT_UNKNOWN_GROUP' });
    // (`wmp.session.close` is a notification: wait until the relay has handled it.)
    await waitFor(async () => (await second.relay.stores.sessions.get(group.id)) === undefined);
    // Bob learns it when he uses it: the relay no longer knows the session, his resume of it is
    // refused, and the group is forgotten.
    await expect(bobGroup.send('anyone?')).rejects.toBeInstanceOf(WmpClientError);
    expect(bobGroup.closed).toBe(true);
    expect(bob.client.state).toBe('connected');
  });
});
