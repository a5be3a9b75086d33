import type { Capabilities } from '@wmp/jsonrpc-envelope';
import type { VerifiedAssertion, WmpServer } from '@wmp/session';
import type { Listener } from '../emitter.js';
import type { RoutedInbox } from './routed-inbox.js';
import type { PeerSessionEvents } from './types.js';

/**
 * A session another party opened to this client through the relay and authenticated on: this
 * client is its responder (its flows and resolvers answer the initiator's calls).
 */
export class IncomingSession {
  readonly id: string;
  /** Who opened it, as it authenticated to us. */
  readonly initiator: string;
  /** The identity assertions the initiator presented when it authenticated, verified (core §5.6). */
  readonly assertions: readonly VerifiedAssertion[];
  readonly #server: WmpServer;
  readonly #inbox: RoutedInbox;
  #capabilities: Capabilities;
  #closed = false;
  /** We asked for the end (else the initiator did, or the session expired). */
  #closing = false;

  /** @internal Made by the client's responder. */
  constructor(
    server: WmpServer,
    session: { readonly id: string; readonly initiator: string; readonly capabilities: Capabilities },
    inbox: RoutedInbox,
    assertions: readonly VerifiedAssertion[] = [],
  ) {
    this.#server = server;
    this.id = session.id;
    this.initiator = session.initiator;
    this.assertions = assertions;
    this.#capabilities = session.capabilities;
    this.#inbox = inbox;
  }

  get capabilities(): Capabilities {
    return this.#capabilities;
  }

  get closed(): boolean {
    return this.#closed;
  }

  on<K extends keyof PeerSessionEvents>(event: K, listener: Listener<PeerSessionEvents[K]>): () => void {
    return this.#inbox.on(event, listener);
  }

  /** `wmp.message.deliver` to the initiator on this session. */
  send(body: unknown, options: { readonly contentType?: string } = {}): Promise<void> {
    return this.notify('wmp.message.deliver', {
      to: [this.initiator],
      content_type: options.contentType ?? 'application/json',
      body,
    });
  }

  /** A notification to the initiator on this session (the `wmp` metadata is added). */
  notify(method: string, params: Record<string, unknown> = {}): Promise<void> {
    return this.#server.notifySession(this.id, method, params);
  }

  /** Ends the session for both parties. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closing = true;
    await this.#server.endSession(this.id);
  }

  /** @internal The session ended (either side). */
  ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#inbox.closed(this.#closing ? 'us' : 'peer');
  }
}
