// A bare WMP client for the relay benches: the same frames WmpSession sends (create,
// authenticate with a signed challenge, wmp.relay.register), written straight to a `ws` socket,
// so the load generator spends its CPU on the traffic and not on client machinery. Once open,
// the socket is the caller's: it builds its own frames and reads its own.
import { generateKeypair, type Keypair, signChallenge } from '@wmp/jcs-signing';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import { WebSocket } from 'ws';

export interface WmpClient {
  readonly did: string;
  readonly sessionId: string;
  readonly socket: WebSocket;
  /** `wmp` metadata of this client's frames. */
  readonly wmp: { readonly version: string; readonly session_id: string; readonly sender: string };
}

/** What the relay test clients offer (relay-server's CLIENT_CAPABILITIES): with `offline`, statuses come. */
export const CLIENT_CAPABILITIES = { messaging: {}, relay: {}, offline: {} };

const VERSION = '0.1';

/**
 * Opens a WebSocket (subprotocol wmp.v1) and resolves once it is open. `localAddress` (a loopback
 * address other than 127.0.0.1, say) makes the client its own source for the relay's per-source
 * limits, as clients on different hosts are.
 */
export function openSocket(url: string, localAddress?: string): Promise<WebSocket> {
  const socket = new WebSocket(url, 'wmp.v1', {
    perMessageDeflate: false,
    ...(localAddress === undefined ? {} : { localAddress }),
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** One request at a time during the handshake: send, then wait for the answer with that id. */
function call(socket: WebSocket, id: string, method: string, params: Record<string, unknown>): Promise<any> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: unknown) => {
      const message = JSON.parse(String(data)) as { id?: string; result?: unknown; error?: { code: number } };
      if (message.id !== id) return;
      socket.off('message', onMessage);
      if (message.error) reject(new Error(`${method}: ${message.error.code}`));
      else resolve(message.result);
    };
    socket.on('message', onMessage);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  });
}

/** An authenticated client with a hop session on the relay at `url` (ws://host:port/wmp), registered. */
export async function openClient(
  url: string,
  keypair: Keypair = generateKeypair(),
  localAddress?: string,
): Promise<WmpClient> {
  const socket = await openSocket(url, localAddress);
  const sender = keypair.did;
  const created = await call(socket, 'req-1', 'wmp.session.create', {
    wmp: { version: VERSION, sender },
    capabilities_offered: CLIENT_CAPABILITIES,
  });
  const sessionId = created.wmp.session_id as string;
  const wmp = { version: VERSION, session_id: sessionId, sender };
  const timestamp = rfc3339(Date.now());
  const challenge = created.challenge as string;
  const signature = await signChallenge({ challenge, session_id: sessionId, sender, timestamp }, keypair);
  await call(socket, 'req-2', 'wmp.session.authenticate', {
    wmp,
    auth: { type: 'signed_challenge', challenge, signature, timestamp },
  });
  await call(socket, 'req-3', 'wmp.relay.register', { wmp });
  return { did: sender, sessionId, socket, wmp };
}
