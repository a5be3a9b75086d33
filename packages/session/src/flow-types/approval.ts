// The built-in `approval` flow (core §6.3): `awaiting_review` naming the reviewer and the
// deadline, then `approve` / `reject` (ending it with `{approved, approver, timestamp}`) or
// `comment` (another `awaiting_review`). Either a participant reviews (its `wmp.flow.action`), or
// the responder itself decides through its application's consent callback.
import { NotAuthorizedError, rfc3339 } from '@wmp/jsonrpc-envelope';
import type { FlowControl, FlowRecord, FlowType } from './flow-type.js';
import { type ApprovalRequest, approvalRequestOf } from './requests.js';

/** What the reviewer's application is asked. */
export interface ApprovalReview {
  readonly request: ApprovalRequest;
  readonly flowId: string;
  readonly sessionId: string;
  /** Who asks (the flow's initiator). */
  readonly initiator: string | undefined;
  readonly deadline: string;
}

/** The reviewer's answer. */
export interface ApprovalDecision {
  readonly approved: boolean;
  readonly comment?: string;
}

export interface ApprovalFlowOptions {
  /**
   * The responder reviews: its application's consent callback decides (a participant's actions
   * are then refused). Without it, a participant of the session reviews with `wmp.flow.action`.
   */
  readonly review?: (review: ApprovalReview) => ApprovalDecision | Promise<ApprovalDecision>;
  /** Who decides with `review` (the result's `approver`); default the reviewer the flow names. */
  readonly approver?: string;
  readonly now?: () => number;
}

/** Who reviews: those the start names (`participants`), else the session's others. */
export function reviewersOf(flow: Readonly<FlowRecord>): string[] {
  return flow.participants.length > 0 ? [...flow.participants] : flow.members.filter((m) => m !== flow.initiator);
}

const MAX_COMMENT = 4096;

function commentOf(params: Record<string, unknown>): string | undefined {
  return typeof params.comment === 'string' ? params.comment.slice(0, MAX_COMMENT) : undefined;
}

export function approvalFlow(options: ApprovalFlowOptions = {}): FlowType {
  const now = options.now ?? Date.now;
  // A comment is its own `awaiting_review` step; the result is exactly core §6.3's.
  const comment = (control: FlowControl, by: string, text: string) => {
    const last = (control.flow.lastProgress?.payload ?? {}) as Record<string, unknown>;
    return control.progress('awaiting_review', { ...last, comment: { by, text, timestamp: rfc3339(now()) } });
  };
  const finish = async (control: FlowControl, approved: boolean, approver: string, text: string | undefined) => {
    if (text !== undefined) await comment(control, approver, text);
    await control.complete({ approved, approver, timestamp: rfc3339(now()) });
  };
  return {
    validateStart: (params) => void approvalRequestOf(params),
    actions: { awaiting_review: ['approve', 'reject', 'comment'] },
    async onStart(params, control) {
      const flow = control.flow;
      const request = approvalRequestOf(params);
      const reviewers = reviewersOf(flow);
      const deadline = rfc3339(flow.expiresAt);
      await control.progress('awaiting_review', {
        ...request,
        ...(reviewers.length === 1 ? { reviewer: reviewers[0] } : { reviewers }),
        deadline,
        ...(flow.initiator === undefined ? {} : { requester: flow.initiator }),
      });
      const review = options.review;
      if (review === undefined) return;
      const approver = options.approver ?? reviewers[0] ?? 'responder';
      // Decided after the start is answered: the application may take its time (until the timeout).
      void (async () => {
        const decision = await review({
          request,
          flowId: flow.id,
          sessionId: flow.sessionId,
          initiator: flow.initiator,
          deadline,
        });
        await finish(control, decision.approved === true, approver, decision.comment);
      })().catch(() => control.fail('invalid_state').catch(() => undefined));
    },
    async onAction(action, params, control, actor) {
      const reviewers = reviewersOf(control.flow);
      if (options.review !== undefined) throw new NotAuthorizedError({ reason: 'the responder reviews this flow' });
      if (actor === undefined || !reviewers.includes(actor)) {
        throw new NotAuthorizedError({ reason: 'not a reviewer of this flow' });
      }
      if (action === 'comment') return comment(control, actor, commentOf(params) ?? '');
      await finish(control, action === 'approve', actor, undefined);
    },
  };
}
