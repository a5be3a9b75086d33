// The built-in flows from the SDK (core §6.3, §6.4): the initiator asks for an approval or a
// signature and gets the result typed (a proof verified); a participant answers the ones that
// name it through its application's consent callbacks.
import { BoundedSet } from '@wmp/jsonrpc-envelope';
import {
  type ApprovalDecision,
  type ApprovalReview,
  approvalRequestOf,
  type FlowStarter,
  type ProofExpectations,
  proofSignerOf,
  type ResponderIdentity,
  requestSignature,
  type SignatureResult,
  type SignConsent,
  type SignRequest,
  signProof,
  signRequestOf,
} from '@wmp/session';
import type { SessionCalls } from './session-calls.js';
import type { FlowEvent } from './types.js';

/** The application's consent to the built-in flows that ask it something. */
export interface FlowConsent {
  /** Review an approval request: approve or reject (with a comment). */
  readonly approval?: (review: ApprovalReview) => ApprovalDecision | Promise<ApprovalDecision>;
  /** Whether to sign what is asked (the SDK then signs with the client's key). */
  readonly sign?: (consent: SignConsent) => boolean | Promise<boolean>;
}

export interface ApprovalRequestOptions {
  /** Seconds the responder gives the flow. */
  readonly timeout?: number;
  readonly onProgress?: (step: string, payload: Record<string, unknown> | undefined) => void;
  /** The approver expected (a result from anyone else is refused). */
  readonly from?: string;
}

export interface SignatureRequestOptions
  extends Pick<ProofExpectations, 'trustAnchors' | 'resolver' | 'maxAgeSeconds' | 'skewSeconds'> {
  readonly timeout?: number;
  readonly onProgress?: (step: string, payload: Record<string, unknown> | undefined) => void;
}

/** A `FlowStarter` over the calls of one of the client's sessions (its own or a group session). */
export function flowStarter(id: string, calls: Pick<SessionCalls, 'startFlow'>): FlowStarter {
  return {
    id,
    async startFlow(type, params, options = {}) {
      const handle = await calls.startFlow(type, params, {
        ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      });
      return { flowId: handle.id, done: handle.done };
    },
  };
}

/**
 * The built-in `sign` flow (core §6.4) with the SDK's options: what the proof is verified
 * against (`signer`, trust anchors, ages) apart from the flow's own `timeout` and `onProgress`.
 */
export function requestSignatureWith(
  starter: FlowStarter,
  request: SignRequest,
  options: SignatureRequestOptions & { readonly signer: string },
): Promise<SignatureResult> {
  const { timeout, onProgress, ...verify } = options;
  return requestSignature(starter, request, verify, {
    ...(timeout === undefined ? {} : { timeout }),
    ...(onProgress ? { onProgress } : {}),
  });
}

/** Flows answered, remembered so that a repeated step (a comment, a resume) is answered once. */
const ANSWERED = 1024;

/**
 * Answers the built-in flows on the client's sessions whose `awaiting_review` or
 * `awaiting_signature` names `me`: the consent callback decides, then the SDK acts (a signature
 * made with `identity`). Returns the function that stops.
 */
export function answerFlows(
  on: (listener: (event: FlowEvent) => void) => () => void,
  act: (sessionId: string, flowId: string, action: string, params: Record<string, unknown>) => Promise<unknown>,
  me: ResponderIdentity,
  consent: FlowConsent,
  report: (error: unknown) => void,
): () => void {
  const answered = new BoundedSet<string>(ANSWERED);
  const signer = proofSignerOf(me);
  const handle = async (event: FlowEvent): Promise<void> => {
    const payload = event.payload ?? {};
    const named = (one: string, many: string) =>
      payload[one] === me.id || (Array.isArray(payload[many]) && (payload[many] as unknown[]).includes(me.id));
    const key = `${event.sessionId}\u0000${event.flowId}`;
    const base = {
      flowId: event.flowId,
      sessionId: event.sessionId,
      initiator: typeof payload.requester === 'string' ? payload.requester : undefined,
    };
    if (event.step === 'awaiting_review' && consent.approval && named('reviewer', 'reviewers')) {
      if (answered.has(key)) return;
      answered.add(key);
      const deadline = typeof payload.deadline === 'string' ? payload.deadline : '';
      const decision = await consent.approval({ ...base, request: approvalRequestOf(payload), deadline });
      if (decision.comment !== undefined) {
        await act(event.sessionId, event.flowId, 'comment', { comment: decision.comment });
      }
      await act(event.sessionId, event.flowId, decision.approved ? 'approve' : 'reject', {});
    } else if (event.step === 'awaiting_signature' && consent.sign && named('signer', 'signers')) {
      if (answered.has(key)) return;
      answered.add(key);
      const request = signRequestOf(payload);
      if (!(await consent.sign({ ...base, request }))) {
        await act(event.sessionId, event.flowId, 'decline', {});
        return;
      }
      const proof = await signProof(request, signer, { sessionId: event.sessionId });
      await act(event.sessionId, event.flowId, 'submit', { proof_type: 'jwt', proof });
    }
  };
  return on((event) => {
    if (event.kind === 'progress') void handle(event).catch(report);
  });
}
