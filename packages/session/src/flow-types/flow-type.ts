// What a flow type is (core §6.1, §6.5): the record the responder keeps, the control a type
// drives its flow with, and the type's hooks.
import { FlowError } from '@wmp/jsonrpc-envelope';

export type FlowState = 'in_progress' | 'completed' | 'error' | 'cancelled' | 'timed_out';

/** A flow as the responder tracks it (core §6.1). */
export interface FlowRecord {
  readonly id: string;
  readonly type: string;
  readonly sessionId: string;
  /** Who started it; with `participants`, the only ones who may cancel it. */
  readonly initiator: string | undefined;
  readonly participants: readonly string[];
  /** The session's participants when it started (who may review or sign when the flow names nobody). */
  readonly members: readonly string[];
  /** When it times out, in ms since the epoch. */
  readonly expiresAt: number;
  state: FlowState;
  step: string | undefined;
  /** The params of the latest `wmp.flow.progress`, re-sent on resume (core §6.2.1). */
  lastProgress: Record<string, unknown> | undefined;
}

/** Lets a flow type drive its flow: emit progress, complete or fail it. */
export interface FlowControl {
  readonly flow: Readonly<FlowRecord>;
  progress(step: string, payload?: Record<string, unknown>): Promise<void>;
  complete(result?: Record<string, unknown>): Promise<void>;
  fail(reason: string, message?: string, data?: Record<string, unknown>): Promise<void>;
}

/** A flow type (core §6.3, §6.5): its capability, steps, actions and what to do on start and action. */
export interface FlowType {
  /** The capability that must be negotiated to use it (profile flows); built-in ones need only `flows`. */
  readonly capability?: string;
  /** Checks `wmp.flow.start` params; throw InvalidParamsError to refuse. */
  validateStart?(params: Record<string, unknown>): void;
  /** Actions valid in each step (`*` for any step). An action outside them is -31006 invalid_action. */
  readonly actions?: Readonly<Record<string, readonly string[]>>;
  onStart?(params: Record<string, unknown>, control: FlowControl): void | Promise<void>;
  /** `actor`: the authenticated identity that sent the `wmp.flow.action`. */
  onAction?(
    action: string,
    params: Record<string, unknown>,
    control: FlowControl,
    actor: string | undefined,
  ): void | Promise<void>;
}

export function flowError(
  flow: Pick<FlowRecord, 'id' | 'step'>,
  reason: string,
  retryable: boolean,
): InstanceType<typeof FlowError> {
  return new FlowError({ flow_id: flow.id, reason, retryable, current_step: flow.step ?? null });
}
