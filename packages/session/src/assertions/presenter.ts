// The holder's side of identity assertions on a session it opens (core §5.6): what it presents
// when it authenticates, and whether it tries again when the relying party refuses (-31012
// data says what would be accepted; core §5.6.2 lets the sender retry with that).
import { ErrorCode } from '@wmp/jsonrpc-envelope';
import type { SessionBindingInfo } from '../client-session-types.js';
import type { AssertionRejectionReason } from './checker.js';

/** A -31012 refusal's diagnostics (wmp-tables §2.4). */
export interface AssertionRefusal {
  readonly reason: AssertionRejectionReason | string;
  readonly acceptedFormats: readonly string[];
  readonly requiredClaims: readonly string[];
  readonly acceptedTrustFrameworks: readonly string[];
}

/** What a holder presents on a session it opens, and whether it answers a refusal. */
export interface IdentityPresenter {
  /** The assertions for this session; `refused`: the refusal of the attempt before (a retry). */
  present(session: SessionBindingInfo, refused?: AssertionRefusal): readonly unknown[] | Promise<readonly unknown[]>;
  /** Whether to try again, with a new session, after this refusal (the application allows it); default no. */
  retry?(refused: AssertionRefusal): boolean | Promise<boolean>;
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The diagnostics of a -31012, or undefined for any other error. */
export function assertionRefusalOf(error: unknown): AssertionRefusal | undefined {
  const e = error as { code?: unknown; data?: Record<string, unknown> } | null;
  if (e?.code !== ErrorCode.IdentityAssertionInvalid || e.data === null || typeof e.data !== 'object') return undefined;
  return {
    reason: typeof e.data.reason === 'string' ? e.data.reason : 'invalid_proof',
    acceptedFormats: list(e.data.accepted_formats),
    requiredClaims: list(e.data.required_claims),
    acceptedTrustFrameworks: list(e.data.accepted_trust_frameworks),
  };
}

/**
 * Opens a session (`open` with the assertions to present, made for each attempt's session), and
 * after a -31012 asks `presenter.retry` whether to open again presenting what was asked, at most
 * `retries` times (default 1). A refused attempt's session is left to expire at the responder.
 */
export async function openPresenting<T>(
  open: (identityAssertions: (session: SessionBindingInfo) => Promise<readonly unknown[]>) => Promise<T>,
  presenter: IdentityPresenter,
  retries = 1,
): Promise<T> {
  let refused: AssertionRefusal | undefined;
  for (let attempt = 0; ; attempt++) {
    const asked = refused;
    try {
      return await open(async (session) => presenter.present(session, asked));
    } catch (e) {
      const refusal = assertionRefusalOf(e);
      if (refusal === undefined || attempt >= retries || !(await presenter.retry?.(refusal))) throw e;
      refused = refusal;
    }
  }
}
