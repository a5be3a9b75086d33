// The built-in `sign` flow (core §6.4): `awaiting_signature` naming the signer and what to sign,
// then the proof (`submit` by a participant, checked here) or a refusal (`decline`: the flow ends
// with `wmp.flow.error` reason `rejected`). Or the responder itself signs, after its
// application's consent callback.
import { NotAuthorizedError, rfc3339 } from '@wmp/jsonrpc-envelope';
import { reviewersOf } from './approval.js';
import type { FlowControl, FlowType } from './flow-type.js';
import { flowError } from './flow-type.js';
import { type ProofExpectations, type ProofSigner, signProof, verifyProof } from './proofs.js';
import { type SignRequest, signRequestOf } from './requests.js';

/** What the signer's application is asked to consent to. */
export interface SignConsent {
  readonly request: SignRequest;
  readonly flowId: string;
  readonly sessionId: string;
  readonly initiator: string | undefined;
}

export interface SignFlowOptions {
  /**
   * The responder signs, with `signer`, when its application's consent callback says yes (a
   * participant's actions are then refused). Without it, a participant signs (`submit`).
   */
  readonly consent?: (input: SignConsent) => boolean | Promise<boolean>;
  readonly signer?: ProofSigner;
  /** How a participant's proof is verified (its key: a did:key or did:jwk, a resolver, X.509 anchors). */
  readonly verify?: Pick<ProofExpectations, 'trustAnchors' | 'resolver' | 'skewSeconds' | 'maxAgeSeconds'>;
  readonly now?: () => number;
}

/** The request a flow is about, as its `awaiting_signature` progress says (nothing kept besides). */
function requestOf(control: FlowControl): SignRequest {
  return signRequestOf((control.flow.lastProgress?.payload ?? {}) as Record<string, unknown>);
}

export function signFlow(options: SignFlowOptions = {}): FlowType {
  const now = options.now ?? Date.now;
  const complete = (control: FlowControl, request: SignRequest, signer: string, proof: string) =>
    control.complete({ action: request.action, signer, proof_type: 'jwt', proof });
  return {
    validateStart: (params) => void signRequestOf(params),
    actions: { awaiting_signature: ['submit', 'decline'] },
    async onStart(params, control) {
      const flow = control.flow;
      const request = signRequestOf(params);
      const signers = options.signer ? [options.signer.id] : reviewersOf(flow);
      await control.progress('awaiting_signature', {
        ...request,
        ...(signers.length === 1 ? { signer: signers[0] } : { signers }),
        deadline: rfc3339(flow.expiresAt),
        ...(flow.initiator === undefined ? {} : { requester: flow.initiator }),
      });
      const { consent, signer } = options;
      if (consent === undefined || signer === undefined) return;
      void (async () => {
        const yes = await consent({ request, flowId: flow.id, sessionId: flow.sessionId, initiator: flow.initiator });
        if (!yes) return control.fail('rejected');
        const proof = await signProof(request, signer, { sessionId: flow.sessionId, now: now() });
        await complete(control, request, signer.id, proof);
      })().catch(() => control.fail('invalid_state').catch(() => undefined));
    },
    async onAction(action, params, control, actor) {
      if (options.consent !== undefined) throw new NotAuthorizedError({ reason: 'the responder signs this flow' });
      if (actor === undefined || !reviewersOf(control.flow).includes(actor)) {
        throw new NotAuthorizedError({ reason: 'not a signer of this flow' });
      }
      if (action === 'decline') return control.fail('rejected');
      const request = requestOf(control);
      try {
        await verifyProof(params.proof, request, {
          ...options.verify,
          signer: actor,
          sessionId: control.flow.sessionId,
          now: now(),
        });
      } catch {
        throw flowError(control.flow, 'invalid_proof', true);
      }
      await complete(control, request, actor, params.proof as string);
    },
  };
}
