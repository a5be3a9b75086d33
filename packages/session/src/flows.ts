import { FlowError, NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import { approvalFlow } from './flow-types/approval.js';
import { type FlowControl, type FlowRecord, type FlowState, type FlowType, flowError } from './flow-types/flow-type.js';
import { signFlow } from './flow-types/sign.js';

export { type FlowControl, type FlowRecord, type FlowState, type FlowType, flowError };

const TERMINAL_RETENTION_MS = 5 * 60_000;
const TERMINAL: ReadonlySet<FlowState> = new Set(['completed', 'error', 'cancelled', 'timed_out']);

/**
 * The built-in flow types (core §6.3, §6.4): `approval` and `sign` as run between participants
 * of a session (a participant reviews or signs with `wmp.flow.action`); `approvalFlow` and
 * `signFlow` make ones that decide locally (a consent callback). `message` has no steps.
 */
export const builtInFlowTypes: Readonly<Record<string, FlowType>> = {
  approval: approvalFlow(),
  sign: signFlow(),
  message: {},
};

/** Sends flow notifications for a session; provided by the server per connection. */
export type FlowNotifier = (sessionId: string, method: string, params: Record<string, unknown>) => Promise<void>;

export interface FlowManagerOptions {
  readonly types?: Readonly<Record<string, FlowType>>;
  /** Flows without their own timeout time out after this many seconds (default 10 minutes). */
  readonly defaultTimeoutSeconds?: number;
  readonly maxTimeoutSeconds?: number;
  /** Start with the built-in types (`approval`, `sign`, `message`; default true). */
  readonly builtIns?: boolean;
  readonly now?: () => number;
}

/**
 * Tracks flows per session: lifecycle and states, who may act and cancel, timeouts (which end a
 * flow with `wmp.flow.error` reason `timeout`), and the latest progress for replay on resume.
 */
export class FlowManager {
  readonly #types: Map<string, FlowType>;
  readonly #flows = new Map<string, FlowRecord>();
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #defaultTimeout: number;
  readonly #maxTimeout: number;
  readonly #now: () => number;

  constructor(options: FlowManagerOptions = {}) {
    const builtIns = options.builtIns === false ? {} : builtInFlowTypes;
    this.#types = new Map(Object.entries({ ...builtIns, ...options.types }));
    this.#defaultTimeout = options.defaultTimeoutSeconds ?? 600;
    this.#maxTimeout = options.maxTimeoutSeconds ?? 24 * 3600;
    this.#now = options.now ?? Date.now;
  }

  /** Registers a profile-defined flow type (e.g. `oid4vci`, with its capability). */
  register(name: string, type: FlowType): void {
    this.#types.set(name, type);
  }

  type(name: string): FlowType | undefined {
    return this.#types.get(name);
  }

  get(sessionId: string, flowId: string): FlowRecord | undefined {
    return this.#flows.get(key(sessionId, flowId));
  }

  /** Active flows of a session, for replay of their latest progress on resume. */
  active(sessionId: string): FlowRecord[] {
    return [...this.#flows.values()].filter((f) => f.sessionId === sessionId && !TERMINAL.has(f.state));
  }

  activeCount(sessionId: string): number {
    return this.active(sessionId).length;
  }

  async start(
    input: {
      sessionId: string;
      flowId: string;
      type: string;
      initiator: string | undefined;
      params: Record<string, unknown>;
      timeoutSeconds?: number | undefined;
      /** The session's participants. */
      members?: readonly string[];
    },
    notify: FlowNotifier,
  ): Promise<FlowRecord> {
    const type = this.#types.get(input.type);
    if (!type)
      throw new FlowError({
        flow_id: input.flowId,
        reason: 'unsupported_flow_type',
        retryable: false,
        current_step: null,
      });
    if (this.#flows.has(key(input.sessionId, input.flowId))) {
      throw new FlowError({ flow_id: input.flowId, reason: 'duplicate_flow_id', retryable: false, current_step: null });
    }
    type.validateStart?.(input.params);
    const participants = Array.isArray(input.params.participants)
      ? input.params.participants.filter((p): p is string => typeof p === 'string')
      : [];
    const seconds = Math.min(input.timeoutSeconds ?? this.#defaultTimeout, this.#maxTimeout);
    const flow: FlowRecord = {
      id: input.flowId,
      type: input.type,
      sessionId: input.sessionId,
      initiator: input.initiator,
      participants,
      members: input.members ?? [],
      expiresAt: this.#now() + seconds * 1000,
      state: 'in_progress',
      step: undefined,
      lastProgress: undefined,
    };
    this.#flows.set(key(flow.sessionId, flow.id), flow);
    const timer = setTimeout(() => void this.#timeOut(flow, notify), seconds * 1000);
    (timer as { unref?: () => void }).unref?.();
    this.#timers.set(key(flow.sessionId, flow.id), timer);
    await type.onStart?.(input.params, this.control(flow, notify));
    return flow;
  }

  async action(
    sessionId: string,
    flowId: string,
    action: string,
    params: Record<string, unknown>,
    notify: FlowNotifier,
    actor?: string,
  ): Promise<FlowRecord> {
    const flow = this.#require(sessionId, flowId);
    if (TERMINAL.has(flow.state)) throw flowError(flow, 'already_terminal', false);
    const type = this.#types.get(flow.type)!;
    const allowed = type.actions ? [...(type.actions[flow.step ?? ''] ?? []), ...(type.actions['*'] ?? [])] : undefined;
    if (allowed && !allowed.includes(action)) throw flowError(flow, 'invalid_action', true);
    await type.onAction?.(action, params, this.control(flow, notify), actor);
    return flow;
  }

  /** Cancels a flow: only its initiator or a participant named at start may (core §6.2). */
  cancel(sessionId: string, flowId: string, by: string | undefined): FlowRecord {
    const flow = this.#require(sessionId, flowId);
    const allowed = by !== undefined && (by === flow.initiator || flow.participants.includes(by));
    if (!allowed && flow.initiator !== undefined)
      throw new NotAuthorizedError({ reason: 'not the flow initiator or a participant' });
    if (TERMINAL.has(flow.state)) throw flowError(flow, 'already_terminal', false);
    this.#end(flow, 'cancelled');
    return flow;
  }

  /** Ends every flow of a session (it closed or expired). */
  closeSession(sessionId: string): void {
    for (const flow of [...this.#flows.values()]) {
      if (flow.sessionId !== sessionId) continue;
      this.#clearTimer(flow);
      this.#flows.delete(key(flow.sessionId, flow.id));
    }
  }

  control(flow: FlowRecord, notify: FlowNotifier): FlowControl {
    const guard = () => {
      if (TERMINAL.has(flow.state)) throw flowError(flow, 'already_terminal', false);
    };
    return {
      flow,
      progress: async (step, payload) => {
        guard();
        flow.step = step;
        const params = { flow_id: flow.id, step, ...(payload ? { payload } : {}) };
        flow.lastProgress = params;
        await notify(flow.sessionId, 'wmp.flow.progress', params);
      },
      complete: async (result) => {
        guard();
        this.#end(flow, 'completed');
        await notify(flow.sessionId, 'wmp.flow.complete', { flow_id: flow.id, ...(result ? { result } : {}) });
      },
      fail: async (reason, message = 'Flow error', data = {}) => {
        guard();
        this.#end(flow, 'error');
        await notify(flow.sessionId, 'wmp.flow.error', {
          flow_id: flow.id,
          code: -31006,
          message,
          data: { reason, ...data },
        });
      },
    };
  }

  #require(sessionId: string, flowId: string): FlowRecord {
    const flow = this.#flows.get(key(sessionId, flowId));
    if (!flow) throw new FlowError({ flow_id: flowId, reason: 'unknown_flow', retryable: false, current_step: null });
    return flow;
  }

  async #timeOut(flow: FlowRecord, notify: FlowNotifier): Promise<void> {
    if (TERMINAL.has(flow.state)) return;
    this.#end(flow, 'timed_out');
    await notify(flow.sessionId, 'wmp.flow.error', {
      flow_id: flow.id,
      code: -31006,
      message: 'Flow error',
      data: { reason: 'timeout' },
    }).catch(() => undefined);
  }

  #end(flow: FlowRecord, state: FlowState): void {
    flow.state = state;
    this.#clearTimer(flow);
    // Kept a while so a late action or cancel gets `already_terminal`, then forgotten.
    const k = key(flow.sessionId, flow.id);
    const timer = setTimeout(() => {
      if (this.#flows.get(k) === flow) this.#flows.delete(k);
    }, TERMINAL_RETENTION_MS);
    (timer as { unref?: () => void }).unref?.();
  }

  #clearTimer(flow: FlowRecord): void {
    const k = key(flow.sessionId, flow.id);
    clearTimeout(this.#timers.get(k));
    this.#timers.delete(k);
  }
}

function key(sessionId: string, flowId: string): string {
  return `${sessionId}\u0000${flowId}`;
}
