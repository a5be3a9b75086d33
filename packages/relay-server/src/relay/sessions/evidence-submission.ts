import { type KeyResolver, verifyMessage, type X5cChainVerifier } from '@wmp/jcs-signing';
import { EvidenceRequiredError, WmpError } from '@wmp/jsonrpc-envelope';
import { reasonOfRefusal } from '../evidence/evidence-records.js';

/** How the sender signatures of messages under evidence are checked. */
export interface EvidenceSignatureOptions {
  readonly keyResolver: KeyResolver | undefined;
  readonly signatureChains: X5cChainVerifier | undefined;
}

/**
 * The evidence profile requires signatures on what it records (core §5.4): a deliver on a session
 * under evidence carries its sender's `wmp.signature` (-31009 `signature_required` otherwise),
 * and it holds for the authenticated sender (-31010 with `data.reason` otherwise).
 */
export async function checkEvidenceSignature(
  options: EvidenceSignatureOptions,
  params: Record<string, unknown>,
  sender: string,
): Promise<void> {
  const wmp = params.wmp as { signature?: unknown } | undefined;
  if (wmp?.signature === undefined) throw new EvidenceRequiredError({ reason: 'signature_required' });
  await verifyMessage(
    { jsonrpc: '2.0', method: 'wmp.message.deliver', params },
    {
      required: true,
      signer: sender,
      ...(options.keyResolver ? { resolver: options.keyResolver } : {}),
      ...(options.signatureChains ? { x5c: options.signatureChains } : {}),
    },
  );
}

/** The `event_reason` of a refused deliver, or undefined for a failure that is no answer (it is not the sender's). */
export function refusalReason(e: unknown): ReturnType<typeof reasonOfRefusal> | undefined {
  if (!(e instanceof WmpError)) return undefined;
  const reason = (e.data as { reason?: unknown } | undefined)?.reason;
  return reasonOfRefusal(e.code, typeof reason === 'string' ? reason : undefined);
}
