import type { X5cChainVerifier, X5cSigner } from '@wmp/jcs-signing';
import type { TimestampTokenVerifier, TrustAnchors, X509Identity } from '@wmp/session';
import type { CertificatePurpose } from '@wmp/session/x509';

// pkijs is only for those who use X.509 or timestamps: these load `@wmp/session/x509` and
// `@wmp/session/timestamp` on first use (as `Identity.fromX509` does).

export async function x5cVerifierOf(
  trustAnchors: TrustAnchors,
  purpose: CertificatePurpose,
): Promise<X5cChainVerifier> {
  const { x5cSignatureVerifier } = await import('@wmp/session/x509');
  return x5cSignatureVerifier({ trustAnchors, purpose });
}

export async function messageSignerOf(identity: X509Identity): Promise<X5cSigner> {
  const { x509MessageSigner } = await import('@wmp/session/x509');
  return x509MessageSigner(identity);
}

export async function timestampVerifierOf(anchors: TrustAnchors): Promise<TimestampTokenVerifier> {
  const { timestampVerifier } = await import('@wmp/session/timestamp');
  return timestampVerifier({ anchors });
}

/** What the client needs of a TSA client. */
export interface TimestampSource {
  timestamp(content: Uint8Array, options?: { signal?: AbortSignal }): Promise<{ readonly token: string }>;
}

export async function tsaClientOf(
  url: string | URL,
  anchors: TrustAnchors,
  timeoutMs?: number,
): Promise<TimestampSource> {
  const { TsaClient } = await import('@wmp/session/timestamp');
  return new TsaClient({ url, anchors, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}
