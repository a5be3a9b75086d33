// Makes the relay's registered-delivery settings from the flags: the chains of X.509 mandates and
// signed acceptances checked against --trust-anchors, SD-JWT VC delegations against the
// --delegation-issuer list, the assurance table and the recipient metadata.
import type { RegisteredDeliveryConfig } from '@wmp/relay-server';
import type { DocumentFetch } from '@wmp/session';
import type { RegisteredSettings } from './registered-config.js';

export interface RegisteredFiles {
  /** `--trust-anchors`, read: X.509 principals' mandates and recipients' signed acceptances chain to them. */
  readonly trustAnchors: string | undefined;
  /** `--high-assurance-anchors`, read. */
  readonly highAssurance: string | undefined;
}

export async function loadRegistered(
  settings: RegisteredSettings,
  files: RegisteredFiles,
  fetch: DocumentFetch,
): Promise<RegisteredDeliveryConfig> {
  // Loaded on demand: pkijs and the SD-JWT libraries only for those who use them.
  const signatureChains = files.trustAnchors
    ? (await import('@wmp/session/x509')).x5cSignatureVerifier({ trustAnchors: files.trustAnchors })
    : undefined;
  const delegationCredentials = settings.delegation
    ? (await import('@wmp/session/sd-jwt')).sdJwtDelegationChecker(
        { issuersFor: settings.delegationIssuers },
        { fetch },
      )
    : undefined;
  return {
    delegation: settings.delegation,
    scheduledDelivery: settings.scheduledDelivery,
    assurance: settings.assurance,
    ...(files.highAssurance ? { anchorLevels: ['high'] } : {}),
    ...(signatureChains ? { signatureChains } : {}),
    ...(delegationCredentials ? { delegationCredentials } : {}),
    recipientMetadata: {
      ...(settings.acceptedContentTypes ? { acceptedContentTypes: settings.acceptedContentTypes } : {}),
      ...(settings.recipientMaxMessageSize === undefined ? {} : { maxMessageSize: settings.recipientMaxMessageSize }),
      ...(settings.consignmentPreference ? { consignmentPreference: settings.consignmentPreference } : {}),
      encryptionRequired: settings.encryptionRequired,
    },
  };
}
