// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { readFileSync } from 'node:fs';
import { generateKeypair } from '@wmp/jcs-signing';
import type { WmpError } from '@wmp/jsonrpc-envelope';
import { createRelay, relayAuthenticators } from '@wmp/relay-server/node';
import { Peer, WmpSession } from '@wmp/session';
import { x509Identity } from '@wmp/session/x509';
import { WebSocketClientTransport } from '@wmp/transports/node';
import { WebSocket } from 'ws';

// Test certificates of @wmp/session's examples: a root CA and a wallet under it.
const pem = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

// A relay that also takes x509:* senders whose chains end at the operator's trust anchors.
const relay = createRelay({ authenticators: await relayAuthenticators({ trustAnchors: pem('root.pem') }) });
const { url } = await relay.listen();
const wellKnown = await (await fetch(`${url}/.well-known/wmp-configuration`)).json();
console.log('accepted_schemes:', wellKnown.accepted_schemes.join(' '));
console.log('accepted_identifier_schemes:', wellKnown.accepted_identifier_schemes.join(' '));

async function connect(): Promise<Peer> {
  const peer = new Peer(new WebSocketClientTransport({ url: `${url.replace(/^http/, 'ws')}/wmp`, WebSocket }));
  await peer.start();
  return peer;
}

// The wallet authenticates with its certificate (x5c); the relay proves its relay_id in return.
const wallet = await x509Identity({ certificatesPem: pem('wallet-chain.pem'), privateKeyPem: pem('wallet-key.pem') });
const session = await WmpSession.open(await connect(), { x509: wallet, verifyResponder: { id: wellKnown.relay_id } });
console.log('authenticated as:', session.sender);
console.log('the relay proved its relay_id:', session.responder === wellKnown.relay_id);

// A client that expects another relay (another key) refuses this one.
try {
  await WmpSession.open(await connect(), { x509: wallet, verifyResponder: { id: generateKeypair().did } });
} catch (e) {
  console.log('another relay expected:', (e as WmpError).code, JSON.stringify((e as WmpError).data));
}
await session.close();
await relay.close();
