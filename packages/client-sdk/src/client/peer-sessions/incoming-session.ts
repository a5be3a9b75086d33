import type { Capabilities } from '@wmp/jsonrpc-envelope';
import type { VerifiedAssertion, WmpServer } from '@wmp/session';
import type { Listener } from '../emitter.js';
import type { MessageProver } from '../proofs/message-prover.js';
import type { ProofRequest } from '../proofs/types.js';
import { signable } from '../session-calls.js';
import type { RoutedInbox } from './routed-inbox.js';
import type { PeerSessionEvents } from './types.js';

/** What an incoming session needs of its client to sign what it sends. */
export interface IncomingSessionSigning {
  /** This client's identifier: the `wmp.sender` a signature is bound to. */
  readonly sender: string;
  readonly prover: MessageProver;
}

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
  readonly #signing: IncomingSessionSigning;
  #capabilities: Capabilities;
  #closed = false;
  /** We asked for the end (else the initiator did, or the session expired). */
  #closing = false;

  /** @internal Made by the client's responder. */
  constructor(
    server: WmpServer,
    session: { readonly id: string; readonly initiator: string; readonly capabilities: Capabilities },
    inbox: RoutedInbox,
    signing: IncomingSessionSigning,
    assertions: readonly VerifiedAssertion[] = [],
  ) {
    this.#server = server;
    this.#signing = signing;
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

  /**
   * `wmp.message.deliver` to the initiator on this session, signed and timestamped as the
   * session, the client and `options` ask (`sign`, `timestamp`).
   */
  send(body: unknown, options: ProofRequest & { readonly contentType?: string } = {}): Promise<void> {
    return this.notify(
      'wmp.message.deliver',
      { to: [this.initiator], content_type: options.contentType ?? 'application/json', body },
      options,
    );
  }

  /**
   * A notification to the initiator on this session (the `wmp` metadata is added; signed where
   * the session negotiated `non_repudiation` or `evidence`, or `options.sign`).
   */
  async notify(method: string, params: Record<string, unknown> = {}, options: ProofRequest = {}): Promise<void> {
    const { prover, sender } = this.#signing;
    const request = method === 'wmp.message.deliver' ? options : { ...options, timestamp: options.timestamp ?? false };
    if (!signable(method) || !prover.wants(this.#capabilities, request)) {
      return this.#server.notifySession(this.id, method, params);
    }
    // The session metadata goes in now: the server keeps a `wmp` it is given as it is.
    const { wmp, ...content } = params as { wmp?: Record<string, unknown> };
    const full = { wmp: { version: '0.1', session_id: this.id, sender, ...wmp }, ...content };
    return this.#server.notifySession(this.id, method, await prover.prove(method, full, this.#capabilities, request));
  }

  /** Ends the session for both parties. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closing = true;
    await this.#server.closeSession(this.id);
  }

  /** @internal The session ended (either side). */
  ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#inbox.closed(this.#closing ? 'us' : 'peer');
  }
}
