// The initiator's side of the built-in flows: start one on a session, wait for its end, and
// hand back what it produced, typed and (for `sign`) verified.
import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import { FlowError } from '@wmp/jsonrpc-envelope';
import { type ProofExpectations, verifyProof } from './proofs.js';
import { type ApprovalRequest, type ApprovalResult, approvalResultOf, type SignRequest } from './requests.js';

/** What starting a flow needs of a session (a `WmpSession`, an SDK session). */
export interface FlowStarter {
  readonly id: string;
  startFlow(
    type: string,
    params: Record<string, unknown>,
    options?: {
      readonly timeout?: number;
      readonly onProgress?: (step: string, payload: Record<string, unknown> | undefined) => void;
    },
  ): Promise<{ readonly flowId: string; readonly done: Promise<Record<string, unknown>> }>;
}

export interface FlowRequestOptions {
  /** Seconds the responder gives the flow. */
  readonly timeout?: number;
  readonly onProgress?: (step: string, payload: Record<string, unknown> | undefined) => void;
}

/** Asks for approval; resolves with `{approved, approver, timestamp}` (from `from` when given). */
export async function requestApproval(
  session: FlowStarter,
  request: ApprovalRequest,
  options: FlowRequestOptions & { readonly from?: string } = {},
): Promise<ApprovalResult> {
  const { flowId, done } = await session.startFlow('approval', { ...request }, options);
  const result = approvalResultOf(await done, flowId);
  if (options.from !== undefined && result.approver !== options.from) {
    throw new FlowError({ flow_id: flowId, reason: 'invalid_result', retryable: false });
  }
  return result;
}

/** A `sign` flow's proof, verified. */
export interface SignatureResult {
  readonly action: SignRequest['action'];
  readonly signer: string;
  readonly proofType: 'jwt';
  readonly proof: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/**
 * Asks `expected.signer` to sign (a fresh 128-bit nonce unless one is given; the audience is the
 * session id unless given); resolves with the proof once verified (-31010 otherwise).
 */
export async function requestSignature(
  session: FlowStarter,
  request: SignRequest,
  expected: Omit<ProofExpectations, 'sessionId'>,
  options: FlowRequestOptions = {},
): Promise<SignatureResult> {
  const asked: SignRequest = { nonce: `n-${b64urlEncode(randomBytes(16))}`, ...request };
  const { flowId, done } = await session.startFlow('sign', { ...asked }, options);
  const result = await done;
  if (result.signer !== expected.signer || result.action !== asked.action || typeof result.proof !== 'string') {
    throw new FlowError({ flow_id: flowId, reason: 'invalid_result', retryable: false });
  }
  const verified = await verifyProof(result.proof, asked, { ...expected, sessionId: session.id });
  return {
    action: asked.action,
    signer: verified.signer,
    proofType: 'jwt',
    proof: result.proof,
    claims: verified.claims,
  };
}
