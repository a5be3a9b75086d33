import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import {
  InMemoryTransport,
  type OpenSessionOptions,
  Peer,
  WmpServer,
  type WmpServerOptions,
  WmpSession,
} from '../src/index.js';

export interface Harness {
  server: WmpServer;
  connect(): Promise<Peer>;
  open(
    options?: OpenSessionOptions & { keypair?: Keypair },
  ): Promise<{ peer: Peer; session: WmpSession; keypair: Keypair }>;
}

/** A WmpServer with in-memory connections: each `connect()` is a new client connection. */
export function harness(options: WmpServerOptions = {}): Harness {
  const server = new WmpServer(options);
  const connect = async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const peer = new Peer(clientSide);
    await peer.start();
    return peer;
  };
  return {
    server,
    connect,
    async open(o = {}) {
      const keypair = o.keypair ?? generateKeypair();
      const peer = await connect();
      const session = await WmpSession.open(peer, {
        signer: keypair,
        capabilities: { messaging: {}, flows: {} },
        ...o,
      });
      return { peer, session, keypair };
    },
  };
}

export { codeOf } from '../../../test-support/code-of.js';

export const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));
