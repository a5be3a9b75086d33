// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { generateKeypair } from '@wmp/jcs-signing';
import type { WmpError } from '@wmp/jsonrpc-envelope';
import { FlowManager, InMemoryTransport, Peer, WmpServer, WmpSession } from '@wmp/session';

// A responder with an approval flow that asks for review, then completes when approved.
const flows = new FlowManager({
  types: {
    approval: {
      actions: { awaiting_review: ['approve', 'reject'] },
      onStart: (_params, flow) => flow.progress('awaiting_review'),
      onAction: (action, _params, flow) =>
        action === 'approve' ? flow.complete({ approved: true }) : flow.fail('rejected'),
    },
  },
});
const server = new WmpServer({ flows, capabilities: { messaging: { max_size: 65536 }, flows: { max_concurrent: 4 } } });

/** One client connection; any binding from @wmp/transports works the same way. */
async function connect(): Promise<Peer> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const peer = new Peer(clientSide);
  await peer.start();
  return peer;
}

// Create a session and authenticate with a signed challenge, in one call.
const alice = generateKeypair();
const session = await WmpSession.open(await connect(), {
  signer: alice,
  capabilities: { messaging: { max_size: 1_000_000 }, flows: {} },
});
console.log('session:', session.id.startsWith('ses-'));
console.log('negotiated:', JSON.stringify(session.capabilities));

// Run a flow: progress arrives as notifications, the result when it completes.
const { flowId, done } = await session.startFlow(
  'approval',
  { subject: 'Pay invoice 42' },
  {
    onProgress: (step) => console.log('flow step:', step),
  },
);
await session.request('wmp.flow.action', { flow_id: flowId, action: 'approve' });
console.log('flow result:', JSON.stringify(await done));

// A message claiming someone else's identity is refused (sender binding).
try {
  await session.request('wmp.capability.list', { wmp: { sender: generateKeypair().did } });
} catch (e) {
  console.log('spoofed sender:', (e as WmpError).code);
}

// Drop the connection and resume on a new one with the rotated token.
await session.peer.close();
console.log('missed while away:', await session.resume(await connect()));
console.log('still works:', 'capabilities' in ((await session.request('wmp.capability.list')) as object));
await session.close();
