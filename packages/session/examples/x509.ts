// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { readFileSync } from 'node:fs';
import { generateKeypair } from '@wmp/jcs-signing';
import type { WmpError } from '@wmp/jsonrpc-envelope';
import { InMemoryTransport, Peer, signedChallengeAuthenticator, WmpServer, WmpSession } from '@wmp/session';
import { x5cAuthenticator, x509Identity } from '@wmp/session/x509';

const pem = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const trustAnchors = pem('root.pem');

// A responder that is x509:san:dns:relay.example.net and accepts did:key and X.509 senders.
const relay = await x509Identity({ certificatesPem: pem('relay-chain.pem'), privateKeyPem: pem('relay-key.pem') });
const server = new WmpServer({
  identity: relay,
  authenticators: { signed_challenge: signedChallengeAuthenticator(), x5c: x5cAuthenticator({ trustAnchors }) },
});
console.log('accepted_schemes:', server.acceptedSchemes.join(' '));

async function connect(): Promise<Peer> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const peer = new Peer(clientSide);
  await peer.start();
  return peer;
}

// The initiator authenticates with its certificate (x5c) and checks the responder's (core §4.4.5).
const wallet = await x509Identity({ certificatesPem: pem('wallet-chain.pem'), privateKeyPem: pem('wallet-key.pem') });
const session = await WmpSession.open(await connect(), {
  x509: wallet,
  verifyResponder: { id: 'x509:san:dns:relay.example.net', trustAnchors },
});
console.log('authenticated as:', session.sender);

const refusal = async (what: string, attempt: Promise<unknown>) => {
  try {
    await attempt;
  } catch (e) {
    console.log(`${what}:`, (e as WmpError).code, JSON.stringify((e as WmpError).data));
  }
};
// Not the responder we expected: refused before anything else is sent.
await refusal(
  'another responder',
  WmpSession.open(await connect(), {
    x509: wallet,
    verifyResponder: { id: 'x509:san:dns:other.example', trustAnchors },
  }),
);
// A name the certificate does not carry, and a scheme no authenticator here proves.
await refusal(
  'a name not in the certificate',
  WmpSession.open(await connect(), { x509: wallet, sender: 'x509:san:dns:bank.example' }),
);
await refusal(
  'did:web here',
  WmpSession.open(await connect(), { sender: 'did:web:example.com', signer: generateKeypair() }),
);
await session.close();
await server.close();
