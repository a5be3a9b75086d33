// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { generateKeypair } from '@wmp/jcs-signing';
import type { WmpError } from '@wmp/jsonrpc-envelope';
import { MlsBridgeError, MlsClient, MlsGroup, verifyKeyPackage } from '@wmp/mls-bridge';
import { InMemoryTransport, type MlsSessionProvider, Peer, WmpServer, WmpSession } from '@wmp/session';

// The responder's MLS side: one group per session; the initiator enters through its key package.
const responder = await MlsClient.create({ identity: generateKeypair() });
const groups = new Map<string, MlsGroup>();
const mls: MlsSessionProvider = {
  async createGroup({ sessionId, initiator, keyPackage }) {
    const group = await MlsGroup.create(responder);
    groups.set(sessionId, group);
    if (keyPackage === undefined) return { groupInfo: await group.groupInfo() };
    if ((await verifyKeyPackage(keyPackage, { cipherSuite: responder.cipherSuite })).identity !== initiator) {
      throw new MlsBridgeError('credential_mismatch');
    }
    const { welcome } = await group.add(keyPackage);
    await group.confirmCommit(); // the responder orders its own group's commits
    return { groupInfo: await group.groupInfo(), welcome };
  },
  cipherOf: (sessionId) => groups.get(sessionId),
  deleteGroup: (sessionId) => void groups.delete(sessionId),
};
const server = new WmpServer({
  mls,
  security: { modes: ['mls', 'mls-optional'], cipherSuites: [responder.cipherSuite] },
  capabilities: { messaging: {} },
  hooks: { deliver: (params, ctx) => console.log('responder reads:', params.body, '| was encrypted:', ctx.encrypted) },
});

// One connection; we keep the frames the responder receives to look at the wire.
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const wire: string[] = [];
const handle = serverSide.onmessage!;
serverSide.onmessage = (frame, extra) => {
  wire.push(String(frame));
  handle(frame, extra);
};
const peer = new Peer(clientSide);
await peer.start();

// The initiator offers MLS with a key package, joins by the Welcome, then authenticates.
const aliceKeys = generateKeypair();
const alice = await MlsClient.create({ identity: aliceKeys });
const { keyPackage } = await alice.createKeyPackage();
const bob = generateKeypair().did;
const session = await WmpSession.open(peer, {
  signer: aliceKeys,
  participants: [bob],
  capabilities: { messaging: {} },
  security: { mode: 'mls', cipher_suites: [1, 2] },
  mls: { keyPackage, join: (welcome) => MlsGroup.join(alice, welcome) },
});
console.log('security:', session.security?.mode, 'suite', session.security?.cipher_suite);

// Content is encrypted (core §5.2); `wmp` and the routing copy of `to` stay in the clear.
await session.send([bob], 'Hello over MLS');
const sent = wire.map((f) => JSON.parse(f)).find((m) => m.method === 'wmp.message.deliver');
console.log('on the wire:', Object.keys(sent.params).join(' '), '| body visible:', wire.join().includes('Hello'));

// What the responder sends on the session is encrypted by its member, decrypted here.
const read = new Promise<Record<string, unknown>>((resolve) => session.on('message', resolve));
await server.notifySession(session.id, 'wmp.message.deliver', { body: 'Hi Alice' });
console.log('alice reads:', (await read).body);

// Clear content in an mls session is refused.
try {
  await peer.request('wmp.message.deliver', { wmp: session.metadata(), to: [bob], body: 'in the clear' });
} catch (e) {
  console.log('clear deliver:', (e as WmpError).code);
}
await session.close();
await server.close();
