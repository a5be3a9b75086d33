import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import { type Capabilities, rfc3339 } from '@wmp/jsonrpc-envelope';
import { type CallRunner, requestOptions } from './call-runner.js';
import {
  type AcceptOptions,
  acceptRequest,
  type ConsignmentNotice,
  registeredContent,
  registeredMeta,
} from './consignment.js';
import { type FallbackWatcher, fallbackEnvelope } from './fallback.js';
import type { FlowActionResult, FlowHandle, FlowTracker } from './flows.js';
import { isRecord, str } from './json-values.js';
import type { MessageProver } from './proofs/message-prover.js';
import { statusName } from './received.js';
import type { ClientCallOptions, ClientSendOptions, ClientSendResult, MessageFallback } from './types.js';

/** A flow's `done` rejects this long after its responder-side timeout, if nothing ended it. */
const FLOW_TIMEOUT_GRACE_MS = 5_000;

export interface StartFlowOptions extends ClientCallOptions {
  /** Default a fresh random `flow-...` id. */
  readonly flowId?: string;
  /** Seconds the responder gives the flow (`timeout`); `done` also rejects locally a little after it. */
  readonly timeout?: number;
  readonly onProgress?: (step: string, payload: Readonly<Record<string, unknown>> | undefined) => void;
}

/**
 * What can be done on one of the client's sessions at the relay: its own (`WmpClient`) or a
 * group session (`GroupSession`); both are written over this one interface.
 */
export interface SessionCalls {
  /** `wmp.message.deliver` as a request, to `to` (a group session: undefined for every other participant). */
  send(to: readonly string[] | undefined, body: unknown, options: ClientSendOptions): Promise<ClientSendResult>;
  /** `wmp.message.accept` of a held consented message; resolves the relay's status (`accepted`). */
  accept(what: ConsignmentNotice | string, options: AcceptOptions): Promise<string | undefined>;
  request(method: string, params: Record<string, unknown>, options: ClientCallOptions): Promise<unknown>;
  notify(method: string, params: Record<string, unknown>, options: ClientCallOptions): Promise<void>;
  startFlow(type: string, params: Record<string, unknown>, options: StartFlowOptions): Promise<FlowHandle>;
  actOnFlow(
    flowId: string,
    action: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<FlowActionResult>;
  cancelFlow(flowId: string, options: ClientCallOptions): Promise<void>;
}

/** What the calls of every session share. */
export interface CallContext {
  readonly runner: CallRunner;
  /** The client's DID: the sender of fallback envelopes. */
  readonly sender: string;
  /** The identifier the client authenticates as (its DID, or its `x509:` id): a delegate's `id`. */
  readonly id: string;
  readonly sendRetries: number;
  /** The client's `fallback` option. */
  readonly fallback: MessageFallback | undefined;
  readonly fallbacks: FallbackWatcher;
  readonly flows: FlowTracker;
  /** Signs and timestamps what is sent, as the session and the call ask. */
  readonly prover: MessageProver;
}

/** What is signed where the session asks for signatures: content, flows and the application's own methods. */
export function signable(method: string): boolean {
  return method === 'wmp.message.deliver' || method.startsWith('wmp.flow.') || !method.startsWith('wmp.');
}

/** The calls on the session of `target` (the client's own when undefined). */
export class CallsOnSession implements SessionCalls {
  readonly #context: CallContext;
  readonly #target: string | undefined;

  constructor(context: CallContext, target: string | undefined) {
    this.#context = context;
    this.#target = target;
  }

  async send(to: readonly string[] | undefined, body: unknown, options: ClientSendOptions): Promise<ClientSendResult> {
    const context = this.#context;
    const clientMessageId = options.clientMessageId ?? `cmsg-${b64urlEncode(randomBytes(16))}`;
    const contentType = options.contentType ?? 'application/json';
    const expiresAt = options.expiresAt instanceof Date ? rfc3339(options.expiresAt.getTime()) : options.expiresAt;
    const content = {
      ...(to ? { to: [...to] } : {}),
      content_type: contentType,
      body,
      ...(options.messageType ? { message_type: options.messageType } : {}),
      ...(options.inReplyTo ? { in_reply_to: options.inReplyTo } : {}),
      ...registeredContent(options),
    };
    const params = {
      wmp: {
        client_message_id: clientMessageId,
        ...(expiresAt ? { expires_at: expiresAt } : {}),
        ...registeredMeta(options, context.id),
      },
      ...content,
    };
    // Signed and timestamped once, on the first attempt's session: both cover the content only,
    // so a retry on another session carries the same proofs.
    let proved: Promise<Record<string, unknown>> | undefined;
    const result = await context.runner.run(
      this.#target,
      async (s) => {
        proved ??= context.prover.prove('wmp.message.deliver', params, s.capabilities, options, options.signal);
        return s.request('wmp.message.deliver', await proved, requestOptions(options));
      },
      { retries: context.sendRetries, sessionLoss: true, timeoutIsLoss: true, signal: options.signal },
    );
    const answer = isRecord(result) ? result : {};
    const messageId = str(answer.message_id);
    const fallback = options.fallback === false ? undefined : (options.fallback ?? context.fallback);
    if (fallback && messageId !== undefined) {
      const envelope = fallbackEnvelope(context.sender, clientMessageId, content);
      const message = { messageId, clientMessageId, group: this.#target, contentType, body, envelope };
      context.fallbacks.watch(message, fallback);
    }
    const status = answer.status === 'accepted' ? 'accepted' : statusName(answer.status);
    return { messageId, clientMessageId, status };
  }

  /**
   * `wmp.message.accept` of a held consented message (a notice, or its message id): signed when
   * asked or when the notice says `consented_signed` (the signature is the receipt).
   */
  async accept(what: ConsignmentNotice | string, options: AcceptOptions): Promise<string | undefined> {
    const { params, sign } = acceptRequest(what, options);
    const result = await this.#context.runner.run(
      this.#target,
      async (s) => {
        const proved = sign
          ? await this.#context.prover.prove('wmp.message.accept', params, s.capabilities, { sign, timestamp: false })
          : params;
        return s.request('wmp.message.accept', proved, requestOptions(options));
      },
      { retries: 0, sessionLoss: true, signal: options.signal },
    );
    return isRecord(result) ? str(result.status) : undefined;
  }

  request(method: string, params: Record<string, unknown>, options: ClientCallOptions): Promise<unknown> {
    return this.#context.runner.run(
      this.#target,
      async (s) => s.request(method, await this.#prove(method, params, s.capabilities), requestOptions(options)),
      { retries: 0, sessionLoss: true, signal: options.signal },
    );
  }

  notify(method: string, params: Record<string, unknown>, options: ClientCallOptions): Promise<void> {
    return this.#context.runner.run(
      this.#target,
      async (s) => s.notify(method, await this.#prove(method, params, s.capabilities)),
      { retries: 0, sessionLoss: true, signal: options.signal },
    );
  }

  /** Signed where the session asks for signatures; only deliveries get timestamps by default. */
  #prove(method: string, params: Record<string, unknown>, capabilities: Capabilities) {
    if (!signable(method)) return params;
    return this.#context.prover.prove(method, params, capabilities, { timestamp: false });
  }

  async startFlow(type: string, params: Record<string, unknown>, options: StartFlowOptions): Promise<FlowHandle> {
    const { runner, flows } = this.#context;
    const sessionId = (await runner.sessionWhenConnected(this.#target, options.signal)).id;
    const flowId = options.flowId ?? `flow-${b64urlEncode(randomBytes(16))}`;
    const handle = flows.track(
      sessionId,
      flowId,
      type,
      {
        act: (id, action, p) => this.actOnFlow(id, action, p, {}),
        cancel: (id) => this.cancelFlow(id, {}),
      },
      {
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...(options.timeout === undefined ? {} : { timeoutMs: options.timeout * 1000 + FLOW_TIMEOUT_GRACE_MS }),
      },
    );
    const start = {
      flow_type: type,
      flow_id: flowId,
      params,
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    };
    try {
      await this.request('wmp.flow.start', start, options);
    } catch (e) {
      flows.forget(sessionId, flowId);
      throw e;
    }
    return handle;
  }

  async actOnFlow(
    flowId: string,
    action: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<FlowActionResult> {
    const result = await this.request('wmp.flow.action', { flow_id: flowId, action, params }, options);
    const status = isRecord(result) ? str(result.status) : undefined;
    return { flowId, action, status };
  }

  async cancelFlow(flowId: string, options: ClientCallOptions): Promise<void> {
    await this.request('wmp.flow.cancel', { flow_id: flowId }, options);
  }
}
