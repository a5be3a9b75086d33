// The params and results of the built-in flows (core §6.3, §6.4; wmp-tables §6.6), read strictly:
// a start with a wrong shape is -32602, a completion that is not what the type says is -31006.
import { FlowError, InvalidParamsError } from '@wmp/jsonrpc-envelope';

const MAX_TEXT = 64 * 1024;
const MAX_ATTACHMENTS = 32;

/** What an `approval` flow asks (the core §6.2 example's start params). */
export interface ApprovalRequest {
  readonly subject?: string;
  readonly body?: string;
  readonly attachments?: readonly { readonly content_type: string; readonly uri: string }[];
}

/** How an `approval` flow ended: `{approved, approver, timestamp}` (core §6.3). */
export interface ApprovalResult {
  readonly approved: boolean;
  readonly approver: string;
  readonly timestamp: string;
}

/** The `sign` flow's actions (core §6.4). */
export const SIGN_ACTIONS = ['generate_proof', 'sign_document', 'authorize'] as const;
export type SignAction = (typeof SIGN_ACTIONS)[number];

/** What a `sign` flow asks for (core §6.4): `payload` is the document or the operation, for the two that need one. */
export interface SignRequest {
  readonly action: SignAction;
  readonly nonce?: string;
  readonly audience?: string;
  readonly payload?: unknown;
  readonly proof_type?: 'jwt';
}

const text = (v: unknown, name: string, max = MAX_TEXT): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > max)
    throw new InvalidParamsError({ reason: `params.${name}: must be a string` });
  return v;
};

export function approvalRequestOf(params: Readonly<Record<string, unknown>>): ApprovalRequest {
  const subject = text(params.subject, 'subject');
  const body = text(params.body, 'body');
  let attachments: ApprovalRequest['attachments'];
  if (params.attachments !== undefined) {
    const list = params.attachments;
    const ok =
      Array.isArray(list) &&
      list.length <= MAX_ATTACHMENTS &&
      list.every(
        (a) =>
          a !== null &&
          typeof a === 'object' &&
          typeof (a as Record<string, unknown>).content_type === 'string' &&
          typeof (a as Record<string, unknown>).uri === 'string',
      );
    if (!ok) throw new InvalidParamsError({ reason: 'params.attachments: must be a list of {content_type, uri}' });
    attachments = (list as { content_type: string; uri: string }[]).map((a) => ({
      content_type: a.content_type,
      uri: a.uri,
    }));
  }
  return {
    ...(subject === undefined ? {} : { subject }),
    ...(body === undefined ? {} : { body }),
    ...(attachments === undefined ? {} : { attachments }),
  };
}

export function signRequestOf(params: Readonly<Record<string, unknown>>): SignRequest {
  const action = params.action;
  if (typeof action !== 'string' || !(SIGN_ACTIONS as readonly string[]).includes(action)) {
    throw new InvalidParamsError({ reason: `params.action: must be one of ${SIGN_ACTIONS.join(', ')}` });
  }
  const nonce = text(params.nonce, 'nonce', 1024);
  const audience = text(params.audience, 'audience', 2048);
  if (params.proof_type !== undefined && params.proof_type !== 'jwt') {
    throw new InvalidParamsError({ reason: 'params.proof_type: only jwt is produced' });
  }
  const payload = params.payload;
  if (action !== 'generate_proof' && payload === undefined) {
    throw new InvalidParamsError({ reason: `params.payload: ${action} needs the document or the operation` });
  }
  if (payload !== undefined && typeof payload !== 'string' && (payload === null || typeof payload !== 'object')) {
    throw new InvalidParamsError({ reason: 'params.payload: must be an object or a string' });
  }
  return {
    action: action as SignAction,
    ...(nonce === undefined ? {} : { nonce }),
    ...(audience === undefined ? {} : { audience }),
    ...(payload === undefined ? {} : { payload }),
    ...(params.proof_type === undefined ? {} : { proof_type: 'jwt' as const }),
  };
}

/** A completed approval's result, typed; anything else is -31006 `invalid_result`. */
export function approvalResultOf(result: Readonly<Record<string, unknown>>, flowId?: string): ApprovalResult {
  const { approved, approver, timestamp } = result;
  if (typeof approved !== 'boolean' || typeof approver !== 'string' || typeof timestamp !== 'string') {
    throw new FlowError({ ...(flowId ? { flow_id: flowId } : {}), reason: 'invalid_result', retryable: false });
  }
  return { approved, approver, timestamp };
}
