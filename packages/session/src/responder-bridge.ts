import {
  BoundedSet,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '@wmp/jsonrpc-envelope';
import type { Connection } from './context.js';
import { ConnectionClosedError } from './errors.js';
import type { BaseContext, Peer } from './peer.js';
import { WmpServer } from './server.js';
import type { WmpServerOptions } from './services.js';
import type { Transport, TransportMessageExtra } from './transport.js';

/** Sessions one bridge answers at once, by default. */
const DEFAULT_MAX_SESSIONS = 256;
/** Requests in either direction whose answers are awaited (as many as a Peer keeps pending). */
const MAX_TRACKED_IDS = 1024;

export interface ResponderBridgeOptions extends WmpServerOptions {
  /** Sessions answered at once (default 256); a create past it is -31007 once expired ones are gone. */
  readonly maxSessions?: number;
}

/**
 * The server's side of a bridge: what the server sends goes out on the client's current
 * connection; what the bridge takes from that connection comes in here, one message per frame.
 */
class BridgeTransport implements Transport {
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  onclose?: () => void;
  #closed = false;

  constructor(readonly out: (message: JsonRpcMessage) => Promise<void>) {}

  async start(): Promise<void> {}

  async send(message: JsonRpcMessage | readonly JsonRpcMessage[]): Promise<void> {
    if (this.#closed) throw new ConnectionClosedError();
    for (const m of Array.isArray(message) ? message : [message as JsonRpcMessage]) await this.out(m);
  }

  receive(message: JsonRpcMessage): void {
    if (!this.#closed) this.onmessage?.(JSON.stringify(message));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

function sessionIdOf(message: JsonRpcRequest | JsonRpcNotification): string | undefined {
  const params = message.params as { wmp?: { session_id?: unknown }; session_id?: unknown } | undefined;
  const named = message.method === 'wmp.session.resume' ? params?.session_id : params?.wmp?.session_id;
  return typeof named === 'string' ? named : undefined;
}

/**
 * A WMP responder over a client's own connection (transport §6.2: a wallet behind a relay that
 * answers sessions other parties open to it): the relay offers it `wmp.session.create` requests
 * and passes it every frame of the sessions it answered; it answers them with a `WmpServer` of
 * its own (negotiation, authentication of the initiator, flows, resolve), exactly as over a
 * direct connection. One bridge lives across reconnects: `attach` moves it to the new connection.
 */
export class ResponderBridge {
  readonly server: WmpServer;
  readonly #transport: BridgeTransport;
  readonly #sessions = new Set<string>();
  /** Ids of creates handed to the server: their answers name new sessions. */
  readonly #creates = new BoundedSet<JsonRpcId>(MAX_TRACKED_IDS);
  /** Ids of requests the server sent to an initiator: their answers come back to it. */
  readonly #asked = new BoundedSet<JsonRpcId>(MAX_TRACKED_IDS);
  readonly #maxSessions: number;
  #connection: Connection | undefined;
  #peer: Peer<BaseContext> | undefined;

  private constructor(options: ResponderBridgeOptions) {
    this.#maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    const hooks = options.hooks;
    this.server = new WmpServer({
      ...options,
      maxSessionsPerConnection: this.#maxSessions,
      // The one connection is the bridge itself: never closed for not logging in (the relay
      // bounds the real connection).
      unauthenticatedTimeoutMs: Number.POSITIVE_INFINITY,
      hooks: {
        ...hooks,
        sessionEnded: (session) => {
          this.#sessions.delete(session.id);
          hooks?.sessionEnded?.(session);
        },
      },
    });
    this.#transport = new BridgeTransport((m) => this.#out(m));
  }

  static async start(options: ResponderBridgeOptions = {}): Promise<ResponderBridge> {
    const bridge = new ResponderBridge(options);
    bridge.#connection = await bridge.server.connect(bridge.#transport);
    return bridge;
  }

  /** The sessions this bridge answers now. */
  get sessions(): ReadonlySet<string> {
    return this.#sessions;
  }

  /** Takes its frames from `peer` from now on (the client's new connection after a reconnect). */
  attach(peer: Peer<BaseContext>): void {
    if (this.#peer === peer) return;
    this.detach();
    this.#peer = peer;
    peer.divert = (message) => this.#takes(message);
  }

  /** Stops taking frames (the server's own sessions stay, for the next `attach`). */
  detach(): void {
    if (this.#peer !== undefined) this.#peer.divert = undefined;
    this.#peer = undefined;
  }

  async close(): Promise<void> {
    this.detach();
    await this.server.close();
  }

  /** Whether `message`, arriving on the client's connection, is for this bridge (then handed to it). */
  #takes(message: JsonRpcMessage): boolean {
    if (!('method' in message)) {
      if (message.id === null || !this.#asked.delete(message.id)) return false;
      this.#transport.receive(message);
      return true;
    }
    const isRequest = 'id' in message;
    if (message.method === 'wmp.session.create') {
      if (!isRequest) return false;
      this.#creates.add((message as JsonRpcRequest).id);
      void this.#offered(message as JsonRpcRequest);
      return true;
    }
    const sessionId = sessionIdOf(message);
    if (sessionId === undefined || !this.#sessions.has(sessionId)) return false;
    this.#transport.receive(message);
    return true;
  }

  /** A create: expired sessions make room first, so that stale ones never fill the bridge. */
  async #offered(message: JsonRpcRequest): Promise<void> {
    const connection = this.#connection;
    if (connection !== undefined && connection.sessions.size >= this.#maxSessions) {
      await this.server.sweep().catch(() => undefined);
      for (const id of this.#sessions) if (!connection.sessions.has(id)) this.#sessions.delete(id);
    }
    this.#transport.receive(message);
  }

  async #out(message: JsonRpcMessage): Promise<void> {
    if ('method' in message) {
      if ('id' in message) this.#asked.add((message as JsonRpcRequest).id);
    } else if (message.id !== null && this.#creates.delete(message.id) && 'result' in message) {
      const id = (message.result as { wmp?: { session_id?: unknown } } | null)?.wmp?.session_id;
      if (typeof id === 'string') this.#sessions.add(id);
    }
    const peer = this.#peer;
    if (peer === undefined) throw new ConnectionClosedError();
    await peer.send(message);
  }
}
