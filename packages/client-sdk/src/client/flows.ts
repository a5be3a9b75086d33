import { errorFromJsonRpc, FlowError, type WmpError } from '@wmp/jsonrpc-envelope';
import { WmpClientError } from './errors.js';
import type { FlowEvent } from './types.js';

/** `wmp.flow.action` answered. */
export interface FlowActionResult {
  readonly flowId: string;
  readonly action: string;
  /** The flow's state after the action (`in_progress`, `completed`, ...). */
  readonly status: string | undefined;
}

/** A flow this client started: follow it, act on it, cancel it. */
export interface FlowHandle {
  readonly id: string;
  readonly type: string;
  readonly sessionId: string;
  /** The latest step reported by `wmp.flow.progress`. */
  readonly step: string | undefined;
  /** Settles with the `wmp.flow.complete` result, or rejects with the flow's error (`FlowError` when cancelled). */
  readonly done: Promise<Record<string, unknown>>;
  act(action: string, params?: Record<string, unknown>): Promise<FlowActionResult>;
  /** `wmp.flow.cancel`; `done` then rejects with `FlowError` reason `cancelled`. */
  cancel(): Promise<void>;
}

/** How a handle reaches its session (the client supplies it). */
export interface FlowOps {
  act(flowId: string, action: string, params: Record<string, unknown>): Promise<FlowActionResult>;
  cancel(flowId: string): Promise<void>;
}

export interface TrackOptions {
  readonly onProgress?: (step: string, payload: Readonly<Record<string, unknown>> | undefined) => void;
  /** Rejects `done` with `FlowError` reason `timeout` when nothing ended the flow by then. */
  readonly timeoutMs?: number;
}

interface Tracked {
  readonly handle: FlowHandle & { step: string | undefined };
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: unknown) => void;
  readonly onProgress: TrackOptions['onProgress'];
  timer: ReturnType<typeof setTimeout> | undefined;
}

function key(sessionId: string, flowId: string): string {
  return `${sessionId}\u0000${flowId}`;
}

const asRecord = (x: unknown): Record<string, unknown> | undefined =>
  x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;

/**
 * Follows flows on the client's sessions: a handle per flow this client started (bounded), and a
 * `FlowEvent` for every flow notification, so a participant observes flows others started.
 */
export class FlowTracker {
  readonly #max: number;
  readonly #emit: (event: FlowEvent) => void;
  readonly #flows = new Map<string, Tracked>();

  constructor(max: number, emit: (event: FlowEvent) => void) {
    this.#max = max;
    this.#emit = emit;
  }

  /** A handle for a flow about to be started (before the request, so no notification is missed). */
  track(sessionId: string, flowId: string, type: string, ops: FlowOps, options: TrackOptions = {}): FlowHandle {
    if (this.#flows.size >= this.#max) throw new WmpClientError('ERR_CLIENT_TOO_MANY_FLOWS');
    let resolve!: Tracked['resolve'];
    let reject!: Tracked['reject'];
    const done = new Promise<Record<string, unknown>>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined); // a caller that never awaits `done` must not see an unhandled rejection
    const k = key(sessionId, flowId);
    const handle = {
      id: flowId,
      type,
      sessionId,
      step: undefined as string | undefined,
      done,
      act: (action: string, params: Record<string, unknown> = {}) => ops.act(flowId, action, params),
      cancel: async () => {
        await ops.cancel(flowId);
        this.#settle(k, (t) => t.reject(new FlowError({ flow_id: flowId, reason: 'cancelled' })));
      },
    };
    const tracked: Tracked = { handle, resolve, reject, onProgress: options.onProgress, timer: undefined };
    if (options.timeoutMs !== undefined) {
      tracked.timer = setTimeout(
        () => this.#settle(k, (t) => t.reject(new FlowError({ flow_id: flowId, reason: 'timeout' }))),
        options.timeoutMs,
      );
    }
    this.#flows.set(k, tracked);
    return handle;
  }

  /** Stops following a flow whose start failed. */
  forget(sessionId: string, flowId: string): void {
    const t = this.#flows.get(key(sessionId, flowId));
    if (t) clearTimeout(t.timer);
    this.#flows.delete(key(sessionId, flowId));
  }

  /** A `wmp.flow.*` notification on `sessionId`; false when the method is not a flow's. */
  handle(sessionId: string, method: string, params: Record<string, unknown>): boolean {
    const flowId = typeof params.flow_id === 'string' ? params.flow_id : undefined;
    if (flowId === undefined) return false;
    const k = key(sessionId, flowId);
    if (method === 'wmp.flow.progress') {
      const step = typeof params.step === 'string' ? params.step : '';
      const payload = asRecord(params.payload);
      const t = this.#flows.get(k);
      if (t) {
        t.handle.step = step;
        try {
          t.onProgress?.(step, payload);
        } catch {
          // the application's callback: its failure does not stop the flow
        }
      }
      this.#emit({ sessionId, flowId, kind: 'progress', step, ...(payload ? { payload } : {}) });
      return true;
    }
    if (method === 'wmp.flow.complete') {
      const result = asRecord(params.result) ?? {};
      this.#settle(k, (t) => t.resolve(result));
      this.#emit({ sessionId, flowId, kind: 'completed', result });
      return true;
    }
    if (method === 'wmp.flow.error') {
      const error: WmpError = errorFromJsonRpc({
        code: typeof params.code === 'number' ? params.code : -31006,
        message: typeof params.message === 'string' ? params.message : '',
        data: params.data,
      });
      this.#settle(k, (t) => t.reject(error));
      this.#emit({ sessionId, flowId, kind: 'failed', error });
      return true;
    }
    return false;
  }

  /** Every flow of a session that is gone, or of the client when it closes: `done` rejects with `error`. */
  closeAll(error: unknown, sessionId?: string): void {
    for (const [k, t] of [...this.#flows]) {
      if (sessionId === undefined || t.handle.sessionId === sessionId) this.#settle(k, (x) => x.reject(error));
    }
  }

  #settle(k: string, fn: (t: Tracked) => void): void {
    const t = this.#flows.get(k);
    if (!t) return;
    this.#flows.delete(k);
    clearTimeout(t.timer);
    fn(t);
  }
}
