// The initiator's flows waiting for their end: a flow's `done` promise, settled by the responder's
// `wmp.flow.complete` or `wmp.flow.error` on the session; progress goes to its callback.
import { errorFromJsonRpc, FlowError } from '@wmp/jsonrpc-envelope';

export type FlowProgressListener = (step: string, payload: Record<string, unknown> | undefined) => void;

interface FlowWaiter {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  onProgress?: FlowProgressListener;
}

const FLOW_END_METHODS: ReadonlySet<string> = new Set(['wmp.flow.progress', 'wmp.flow.complete', 'wmp.flow.error']);

export class FlowWaiters {
  readonly #flows = new Map<string, FlowWaiter>();

  /** Waits for `flowId`'s end; the promise never crashes a caller that does not await it. */
  wait(flowId: string, onProgress: FlowProgressListener | undefined): Promise<Record<string, unknown>> {
    let waiter!: FlowWaiter;
    const done = new Promise<Record<string, unknown>>((resolve, reject) => {
      waiter = { resolve, reject, ...(onProgress ? { onProgress } : {}) };
    });
    done.catch(() => undefined);
    this.#flows.set(flowId, waiter);
    return done;
  }

  /** The flow did not start: nothing waits for it. */
  forget(flowId: string): void {
    this.#flows.delete(flowId);
  }

  /** A flow notification from the responder (other methods are ignored). */
  receive(method: string, params: Record<string, unknown>): void {
    if (!FLOW_END_METHODS.has(method)) return;
    const flowId = typeof params.flow_id === 'string' ? params.flow_id : undefined;
    const waiter = flowId ? this.#flows.get(flowId) : undefined;
    if (!waiter || flowId === undefined) return;
    if (method === 'wmp.flow.progress') {
      waiter.onProgress?.(String(params.step), params.payload as Record<string, unknown> | undefined);
      return;
    }
    this.#flows.delete(flowId);
    if (method === 'wmp.flow.complete') {
      waiter.resolve((params.result ?? {}) as Record<string, unknown>);
      return;
    }
    waiter.reject(
      errorFromJsonRpc({
        code: Number(params.code ?? -31006),
        message: String(params.message ?? ''),
        data: params.data,
      }),
    );
  }

  /** The session closed: every flow still waiting fails with `session_closed`. */
  rejectAll(): void {
    for (const waiter of this.#flows.values()) waiter.reject(new FlowError({ reason: 'session_closed' }));
    this.#flows.clear();
  }
}
