import {
  type ApprovalRequest,
  type ApprovalResult,
  requestApproval,
  type SessionCipher,
  type SignatureResult,
  type SignRequest,
} from '@wmp/session';
import {
  type ApprovalRequestOptions,
  flowStarter,
  requestSignatureWith,
  type SignatureRequestOptions,
} from './built-in-flows.js';
import type { FlowActionResult, FlowHandle } from './flows.js';
import type { SessionCalls, StartFlowOptions } from './session-calls.js';
import type { ClientCallOptions, ClientSendOptions, ClientSendResult } from './types.js';

export interface GroupSendOptions extends ClientSendOptions {
  /** Some participants only; default every other participant. */
  readonly to?: readonly string[];
}

/**
 * What an end-to-end layer (the MLS `Group` of this package) plugs into a group session: the
 * session's cipher, and the `wmp.mls.group.*` notifications the relay fans out on it.
 */
export interface GroupSessionLayer {
  /** Encrypted content on the session is decrypted with it before any listener sees it. */
  readonly cipher: SessionCipher;
  /** Every `wmp.mls.group.*` notification of the session, in arrival order (acknowledging is the layer's job). */
  control(method: string, params: Record<string, unknown>): void;
}

/** What a group session asks of the client that holds it, besides calls on it (`id` is the session's). */
export interface GroupHold {
  /** Whether the client still holds the session (not closed or lost, and the client is open). */
  holds(id: string): boolean;
  attach(id: string, layer: GroupSessionLayer | undefined): void;
  receive(id: string, params: Record<string, unknown>): boolean;
  close(id: string): Promise<void>;
}

/**
 * A relay-hosted session with participants (docs/architecture.md, "Group sessions"): what one sends
 * on it fans out to every other participant (or to `to`), live or queued. It rides on the client's
 * connection and is resumed with it; messages on it arrive as the client's `message` events with
 * `group` set.
 */
export class GroupSession {
  readonly id: string;
  readonly #members: readonly string[];
  readonly #calls: SessionCalls;
  readonly #hold: GroupHold;

  constructor(id: string, members: readonly string[], calls: SessionCalls, hold: GroupHold) {
    this.id = id;
    this.#members = Object.freeze([...members]);
    this.#calls = calls;
    this.#hold = hold;
  }

  /** The participants as this client knows them: the creator's list, or what the join answered. */
  get members(): readonly string[] {
    return this.#members;
  }

  /** True once the session was closed or lost (a resume the relay refused). */
  get closed(): boolean {
    return !this.#hold.holds(this.id);
  }

  send(body: unknown, options: GroupSendOptions = {}): Promise<ClientSendResult> {
    return this.#calls.send(options.to, body, options);
  }

  request(method: string, params: Record<string, unknown> = {}, options: ClientCallOptions = {}): Promise<unknown> {
    return this.#calls.request(method, params, options);
  }

  startFlow(type: string, params: Record<string, unknown> = {}, options: StartFlowOptions = {}): Promise<FlowHandle> {
    return this.#calls.startFlow(type, params, options);
  }

  actOnFlow(
    flowId: string,
    action: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions = {},
  ): Promise<FlowActionResult> {
    return this.#calls.actOnFlow(flowId, action, params, options);
  }

  cancelFlow(flowId: string, options: ClientCallOptions = {}): Promise<void> {
    return this.#calls.cancelFlow(flowId, options);
  }

  /** The built-in `approval` flow (core §6.3), reviewed by another participant (`from`, when given). */
  requestApproval(request: ApprovalRequest, options: ApprovalRequestOptions = {}): Promise<ApprovalResult> {
    return requestApproval(flowStarter(this.id, this.#calls), request, options);
  }

  /** The built-in `sign` flow (core §6.4), signed by the participant `signer`: the proof, verified. */
  requestSignature(
    request: SignRequest,
    options: SignatureRequestOptions & { readonly signer: string },
  ): Promise<SignatureResult> {
    return requestSignatureWith(flowStarter(this.id, this.#calls), request, options);
  }

  /**
   * Attaches an end-to-end layer (or detaches it with `undefined`): from then on its cipher reads
   * the session's encrypted content and it gets the session's `wmp.mls.group.*` notifications.
   * Throws `ERR_CLIENT_UNKNOWN_GROUP` when the session is no longer held.
   */
  attach(layer: GroupSessionLayer | undefined): void {
    this.#hold.attach(this.id, layer);
  }

  /**
   * Hands content the layer read another way (fetched from the relay queue and decrypted) to the
   * client's `message` listeners, deduplicated and acknowledged like everything else. False when
   * the session is not held (or the client's inbox is full or closed).
   */
  receive(params: Record<string, unknown>): boolean {
    return this.#hold.receive(this.id, params);
  }

  /** Ends the session for every participant (`wmp.session.close`) and forgets it. */
  close(): Promise<void> {
    return this.#hold.close(this.id);
  }
}
