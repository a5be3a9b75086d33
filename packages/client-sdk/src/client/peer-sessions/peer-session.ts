import type { Capabilities } from '@wmp/jsonrpc-envelope';
import {
  type ApprovalRequest,
  type ApprovalResult,
  type Peer,
  requestApproval,
  type SignatureResult,
  type SignRequest,
  type WmpSession,
} from '@wmp/session';
import { type ApprovalRequestOptions, requestSignatureWith, type SignatureRequestOptions } from '../built-in-flows.js';
import type { Listener } from '../emitter.js';
import type { FlowActionResult } from '../flows.js';
import type { MessageProver } from '../proofs/message-prover.js';
import type { MessageProofs, ProofRequest } from '../proofs/types.js';
import { signable } from '../session-calls.js';
import type { ClientCallOptions } from '../types.js';
import { RoutedInbox } from './routed-inbox.js';
import type { PeerSendOptions, PeerSessionEvents } from './types.js';

/** What a session to a peer needs of its client. */
export interface PeerSessionDeps {
  /** Resolves once the client is connected (calls wait for a reconnection). */
  whenConnected(signal?: AbortSignal): Promise<void>;
  /** Signs and timestamps what is sent, as the session and the call ask. */
  readonly prover: MessageProver;
  /** The checks of a received message's signature, relay chain and token. */
  check(params: Record<string, unknown>): Promise<MessageProofs>;
  /** Acknowledges a message to the relay (it stored it for us). */
  ack(messageId: string): void;
  report(error: unknown): void;
  /** The session ended: the client stops carrying it. */
  forget(session: PeerSession): void;
}

/**
 * A session with another party, end to end through the relay (transport §6.2): the other party
 * answered the create, authenticated us and runs the session's flows, resolve and methods; the
 * relay only routes. `relayHosted`: the other party could not answer, and the relay hosts the
 * session instead (deliveries are queued for it; flows and resolve go to the relay).
 */
export class PeerSession {
  readonly peer: string;
  readonly relayHosted: boolean;
  readonly #session: WmpSession;
  readonly #deps: PeerSessionDeps;
  readonly #inbox: RoutedInbox;
  #closed = false;

  constructor(session: WmpSession, peer: string, relayHosted: boolean, deps: PeerSessionDeps) {
    this.#session = session;
    this.peer = peer;
    this.relayHosted = relayHosted;
    this.#deps = deps;
    this.#inbox = new RoutedInbox(deps.ack, deps.report, deps.check);
    session.on('message', (params) => void this.#inbox.message(params));
    session.on('notification', ({ method, params }) => {
      if (method === 'wmp.session.close') this.#ended('peer');
      else this.#inbox.notification(method, params);
    });
  }

  get id(): string {
    return this.#session.id;
  }

  /** What the two parties negotiated. */
  get capabilities(): Capabilities {
    return this.#session.capabilities;
  }

  /** Who answered and proved itself at open (the peer; the relay when it hosts the session). */
  get responder(): string | undefined {
    return this.#session.responder;
  }

  get closed(): boolean {
    return this.#closed;
  }

  on<K extends keyof PeerSessionEvents>(event: K, listener: Listener<PeerSessionEvents[K]>): () => void {
    return this.#inbox.on(event, listener);
  }

  /**
   * Any method of the session (the `wmp` metadata is added; signed where the session negotiated
   * `non_repudiation` or `evidence`); the peer's refusal rejects with its `WmpError`.
   */
  async request(
    method: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions & ProofRequest = {},
  ): Promise<unknown> {
    await this.#deps.whenConnected(options.signal);
    return this.#session.request(method, await this.#prove(method, params, options), {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
  }

  async notify(
    method: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions & ProofRequest = {},
  ): Promise<void> {
    await this.#deps.whenConnected(options.signal);
    await this.#session.notify(method, await this.#prove(method, params, options));
  }

  /**
   * `wmp.message.deliver` to the peer on this session: stored by the relay, statuses follow.
   * Signed and timestamped as the session, the client and `options` ask (`sign`, `timestamp`).
   */
  send(body: unknown, options: PeerSendOptions = {}): Promise<unknown> {
    return this.request(
      'wmp.message.deliver',
      { to: [this.peer], content_type: options.contentType ?? 'application/json', body },
      options,
    );
  }

  #prove(method: string, params: Record<string, unknown>, options: ProofRequest & { signal?: AbortSignal }) {
    if (!signable(method)) return params;
    const request: ProofRequest =
      method === 'wmp.message.deliver' ? options : { ...options, timestamp: options.timestamp ?? false };
    return this.#deps.prover.prove(method, params, this.#session.capabilities, request, options.signal);
  }

  /** `wmp.resolve` (core §5.8) answered by the peer. */
  resolve(uri: string, type: string, options: ClientCallOptions & { readonly params?: Record<string, unknown> } = {}) {
    return this.request('wmp.resolve', { uri, type, ...(options.params ? { options: options.params } : {}) }, options);
  }

  /** Starts a flow the peer runs; `done` settles with its completion or its error. */
  async startFlow(
    type: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions & {
      readonly onProgress?: (step: string, payload: Record<string, unknown> | undefined) => void;
    } = {},
  ): Promise<{ readonly flowId: string; readonly done: Promise<Record<string, unknown>> }> {
    await this.#deps.whenConnected(options.signal);
    return this.#session.startFlow(type, params, options.onProgress ? { onProgress: options.onProgress } : {});
  }

  /** The built-in `approval` flow (core §6.3), reviewed by the peer: its `{approved, approver, timestamp}`. */
  async requestApproval(request: ApprovalRequest, options: ApprovalRequestOptions = {}): Promise<ApprovalResult> {
    await this.#deps.whenConnected();
    return requestApproval(this.#session, request, { from: this.peer, ...options });
  }

  /**
   * The built-in `sign` flow (core §6.4), signed by the peer: the proof, verified as the peer's
   * (a did:key or did:jwk peer by its key, an X.509 peer with `trustAnchors`); -31010 otherwise.
   */
  async requestSignature(request: SignRequest, options: SignatureRequestOptions = {}): Promise<SignatureResult> {
    await this.#deps.whenConnected();
    return requestSignatureWith(this.#session, request, { ...options, signer: this.peer });
  }

  /** `wmp.flow.action` on a flow of this session. */
  actOnFlow(
    flowId: string,
    action: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions = {},
  ): Promise<FlowActionResult> {
    return this.request('wmp.flow.action', { flow_id: flowId, action, params }, options) as Promise<FlowActionResult>;
  }

  /** Ends the session for both parties. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#session.close();
    } finally {
      this.#ended('us');
    }
  }

  /** @internal The client's new connection (after a reconnect): the relay routes from any of ours. */
  attach(peer: Peer): void {
    if (!this.#closed) this.#session.attach(peer);
  }

  #ended(by: 'us' | 'peer'): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#deps.forget(this);
    this.#inbox.closed(by);
  }
}
