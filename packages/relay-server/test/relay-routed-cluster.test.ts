import { describe, expect, it } from 'vitest';
import { openRoutedSession } from '../../../test-support/routed-parties.js';
import { cluster } from './fixtures/cluster-nodes.js';
import { type Binding, openClient, waitFor } from './fixtures/relay-clients.js';

// A on node 0, B on node 1 of one relay (one store, one coordination): the offer, every frame
// and every answer cross between the nodes on the coordination's per-node channel.
describe.each<Binding>(['ws', 'http'])('a routed session across the nodes of a cluster (%s)', (binding) => {
  it('B on another node answers the create, authenticates A and answers requests; deliveries cross too', async () => {
    const { cluster: c, clients } = await cluster(2);
    const alice = await openClient(c.urls[0]!, { binding });
    const bob = await openClient(c.urls[1]!, { binding });
    clients.push(alice, bob);
    const { bridge, received, session } = await openRoutedSession(alice, bob, { verifyResponder: true });
    expect(session.responder).toBe(bob.keypair.did);
    expect((await bridge.server.store.get(session.id))?.authenticated).toEqual([alice.keypair.did]);
    await expect(session.request('org.example.ping', { text: 'across' })).resolves.toMatchObject({ pong: 'across' });

    const steps: string[] = [];
    const flow = await session.startFlow('approval', {}, { onProgress: (s) => steps.push(s) });
    await waitFor(() => steps.length === 1);
    await session.request('wmp.flow.action', { flow_id: flow.flowId, action: 'approve' });
    await expect(flow.done).resolves.toEqual({ approved: true });

    await session.send([bob.keypair.did], { text: 'stored on node 0, delivered on node 1' });
    await waitFor(() => received.length === 1);
    await session.close();
    await waitFor(() => !bridge.sessions.has(session.id));
  });
});
