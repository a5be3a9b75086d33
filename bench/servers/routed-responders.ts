// The responders of bench/relay-routed-rpc, in their own process: `n` clients of the relay at
// `port`, each with its key from the seeds the parent passes (hex, JSON in argv[3]), a registered
// hop session and a ResponderBridge that answers the sessions routed to it (the model of a wallet
// behind a relay). Prints how many are ready, then serves until stdin closes.
import { keypairFromSeed } from '@wmp/jcs-signing';
import { Peer, ResponderBridge, WmpSession } from '@wmp/session';
import { WebSocketClientTransport } from '@wmp/transports/node';
import { WebSocket } from 'ws';

const [port, seedsJson] = process.argv.slice(2);
const seeds = JSON.parse(seedsJson ?? '[]') as string[];
const peers: Peer[] = [];
for (const seed of seeds) {
  const keypair = keypairFromSeed(Buffer.from(seed, 'hex'));
  const peer = new Peer(
    new WebSocketClientTransport({ url: `ws://127.0.0.1:${port}/wmp`, WebSocket: WebSocket as never }),
  );
  await peer.start();
  const hop = await WmpSession.open(peer, { signer: keypair, capabilities: { messaging: {}, relay: {} } });
  await hop.request('wmp.relay.register', {});
  const bridge = await ResponderBridge.start({
    capabilities: { messaging: {} },
    identity: { id: keypair.did, signer: keypair },
  });
  bridge.attach(peer);
  peers.push(peer);
}
process.stdout.write(`${peers.length}\n`);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
