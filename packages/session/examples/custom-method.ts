// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { generateKeypair } from '@wmp/jcs-signing';
import { methodParams, methodResult, requestMethod, type WmpError } from '@wmp/jsonrpc-envelope';
import { InMemoryTransport, Peer, WmpServer, WmpSession } from '@wmp/session';
import * as v from 'valibot';

const server = new WmpServer({ capabilities: { messaging: {} } });

// One registration: the method's schemas, the capability it operates under (core §9.2) and its
// handler. The capability is offered for negotiation; params are checked before the handler runs.
server.method(
  'org.example.echo',
  requestMethod(methodParams({ text: v.pipe(v.string(), v.maxLength(100)) }), methodResult({ echo: v.string() }), {
    capability: 'org.example.echo',
  }),
  (params) => ({ echo: (params as { text: string }).text.toUpperCase() }),
);

async function open(capabilities: Record<string, object>): Promise<WmpSession> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const peer = new Peer(clientSide);
  await peer.start();
  return WmpSession.open(peer, { signer: generateKeypair(), capabilities });
}

const codeOf = (call: Promise<unknown>) =>
  call.then(
    () => 'ok',
    (e: WmpError) => e.code,
  );

// A session that negotiated the capability may call the method.
const session = await open({ messaging: {}, 'org.example.echo': {} });
console.log('negotiated:', Object.keys(session.capabilities).join(' '));
console.log('echo:', JSON.stringify(await session.request('org.example.echo', { text: 'hello' })));
console.log('bad params:', await codeOf(session.request('org.example.echo', { text: 42 })));

// One that did not is refused (-31005), as for any capability it did not negotiate.
const other = await open({ messaging: {} });
console.log('not negotiated:', await codeOf(other.request('org.example.echo', { text: 'hello' })));

// A name nobody defined is unknown (-32601), and wmp.* names are the protocol's own.
console.log('unknown method:', await codeOf(session.request('org.example.other', {})));
try {
  server.method('wmp.echo', requestMethod(methodParams({}), methodResult({})), () => ({}));
} catch (e) {
  console.log('wmp.* refused:', (e as { code: string }).code);
}
await server.close();
