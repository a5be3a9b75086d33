import type { SessionCipher } from '@wmp/session';
import type { FlowActionResult, FlowHandle } from './flows.js';
import type { ClientCallOptions, ClientSendOptions, ClientSendResult } from './types.js';

export interface StartFlowOptions extends ClientCallOptions {
  /** Default a fresh random `flow-...` id. */
  readonly flowId?: string;
  /** Seconds the responder gives the flow (`timeout`); `done` also rejects locally a little after it. */
  readonly timeout?: number;
  readonly onProgress?: (step: string, payload: Readonly<Record<string, unknown>> | undefined) => void;
}

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

/** What a group session asks of its client (the client implements it; `target` is the session id). */
export interface SessionHost {
  deliverOn(
    target: string,
    to: readonly string[] | undefined,
    body: unknown,
    options: ClientSendOptions,
  ): Promise<ClientSendResult>;
  requestOn(
    target: string,
    method: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<unknown>;
  startFlowOn(
    target: string,
    type: string,
    params: Record<string, unknown>,
    options: StartFlowOptions,
  ): Promise<FlowHandle>;
  actOnFlowOn(
    target: string,
    flowId: string,
    action: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<FlowActionResult>;
  cancelFlowOn(target: string, flowId: string, options: ClientCallOptions): Promise<void>;
  closeGroup(target: string): Promise<void>;
  holdsGroup(target: string): boolean;
  attachOn(target: string, layer: GroupSessionLayer | undefined): void;
  receiveOn(target: string, params: Record<string, unknown>): boolean;
}

/**
 * A relay-hosted session with participants (DESIGN §3): what one sends on it fans out to every
 * other participant (or to `to`), live or queued. It rides on the client's connection and is
 * resumed with it; messages on it arrive as the client's `message` events with `group` set.
 */
export class GroupSession {
  readonly id: string;
  readonly #host: SessionHost;
  readonly #members: readonly string[];

  constructor(host: SessionHost, id: string, members: readonly string[]) {
    this.#host = host;
    this.id = id;
    this.#members = Object.freeze([...members]);
  }

  /** The participants as this client knows them: the creator's list, or what the join answered. */
  get members(): readonly string[] {
    return this.#members;
  }

  /** True once the session was closed or lost (a resume the relay refused). */
  get closed(): boolean {
    return !this.#host.holdsGroup(this.id);
  }

  send(body: unknown, options: GroupSendOptions = {}): Promise<ClientSendResult> {
    return this.#host.deliverOn(this.id, options.to, body, options);
  }

  request(method: string, params: Record<string, unknown> = {}, options: ClientCallOptions = {}): Promise<unknown> {
    return this.#host.requestOn(this.id, method, params, options);
  }

  startFlow(type: string, params: Record<string, unknown> = {}, options: StartFlowOptions = {}): Promise<FlowHandle> {
    return this.#host.startFlowOn(this.id, type, params, options);
  }

  actOnFlow(
    flowId: string,
    action: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions = {},
  ): Promise<FlowActionResult> {
    return this.#host.actOnFlowOn(this.id, flowId, action, params, options);
  }

  cancelFlow(flowId: string, options: ClientCallOptions = {}): Promise<void> {
    return this.#host.cancelFlowOn(this.id, flowId, options);
  }

  /**
   * Attaches an end-to-end layer (or detaches it with `undefined`): from then on its cipher reads
   * the session's encrypted content and it gets the session's `wmp.mls.group.*` notifications.
   * Throws `ERR_CLIENT_UNKNOWN_GROUP` when the session is no longer held.
   */
  attach(layer: GroupSessionLayer | undefined): void {
    this.#host.attachOn(this.id, layer);
  }

  /**
   * Hands content the layer read another way (fetched from the relay queue and decrypted) to the
   * client's `message` listeners, deduplicated and acknowledged like everything else. False when
   * the session is not held (or the client's inbox is full or closed).
   */
  receive(params: Record<string, unknown>): boolean {
    return this.#host.receiveOn(this.id, params);
  }

  /** Ends the session for every participant (`wmp.session.close`) and forgets it. */
  close(): Promise<void> {
    return this.#host.closeGroup(this.id);
  }
}
