// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { generateKeypair, signMessage, verifyRelayChain } from '@wmp/jcs-signing';
import { createRelay } from '@wmp/relay-server/node';
import { Peer, WmpSession } from '@wmp/session';
import { WebSocketClientTransport } from '@wmp/transports/node';
import { WebSocket } from 'ws';

// Relay B takes forwarded messages from any relay (`open`), under the sender rules: here the
// sender signs her message. Relay A routes Bob to relay B and keeps a link to it.
const [alice, bob] = [generateKeypair(), generateKeypair()];
const relayB = createRelay({ federation: { mode: 'open' } });
const { url: urlB } = await relayB.listen();
const relayA = createRelay({ federation: { peers: [urlB], routes: [{ pattern: bob.did, url: urlB }] } });
const { url: urlA } = await relayA.listen();

async function client(url: string, signer: typeof alice): Promise<WmpSession> {
  const peer = new Peer(new WebSocketClientTransport({ url: `${url.replace('http', 'ws')}/wmp`, WebSocket }));
  await peer.start();
  const session = await WmpSession.open(peer, { signer, capabilities: { messaging: {}, relay: {}, offline: {} } });
  await session.request('wmp.relay.register', {});
  return session;
}

const atA = await client(urlA, alice);
const atB = await client(urlB, bob);
console.log('route:', JSON.stringify(await atA.request('ohan.relay.resolve', { identity: bob.did })).includes(urlB));
type Received = { body: unknown; wmp: { sender: string } };
const received = new Promise<Received>((resolve) => atB.on('message', (m) => resolve(m as unknown as Received)));
const delivered = new Promise<void>((resolve) => atA.on('status', (s) => s.status === 'delivered' && resolve()));
const content = { to: [bob.did], content_type: 'application/json', body: { hello: 'bob' } };
const signed = await signMessage(
  { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { ...content, wmp: {} } },
  alice,
);
await atA.request('wmp.message.deliver', signed.params);
const message = await received;
// Relay A signed its entry before the message left for B; B leaves its own unsigned (`when-needed`).
const hops = await verifyRelayChain(
  { jsonrpc: '2.0', method: 'wmp.message.deliver', params: message },
  { allowUnsigned: true },
);
console.log('received:', JSON.stringify(message.body), 'from alice:', message.wmp.sender === alice.did);
console.log('relay chain hops verified:', hops);
await delivered;
console.log('alice heard: delivered');
await atA.peer.close();
await atB.peer.close();
await relayA.close();
await relayB.close();
