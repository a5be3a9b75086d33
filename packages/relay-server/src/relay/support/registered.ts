// Registered delivery at this relay (core §3.3-§3.5, §7.5.1): what the operator turns on and
// how, with its defaults, and the well-known `erds` and `recipient_metadata` objects it publishes.
import type { X5cChainVerifier } from '@wmp/jcs-signing';
import type { DelegationPresentationChecker } from '@wmp/session';
import { type AssuranceLevel, DEFAULT_ASSURANCE, isAssuranceLevel, reachableLevels } from './assurance.js';
import { noEvidenceHooks, type RegisteredEvidenceHooks } from './evidence-hooks.js';

export const CONSIGNMENT_MODES = ['basic', 'consented', 'consented_signed'] as const;
export type ConsignmentMode = (typeof CONSIGNMENT_MODES)[number];

/** What this relay, as the recipients' relay, asks of messages to them (core §7.5.1.2). */
export interface RecipientMetadata {
  /** Content types taken; others are -31005. Default: any. */
  readonly acceptedContentTypes?: readonly string[];
  /** Largest message taken for a recipient here, bytes; larger is -32600. Default: the relay's `maxMessageBytes`. */
  readonly maxMessageSize?: number;
  /** The consignment mode of a message that names none. Default `basic`. */
  readonly consignmentPreference?: ConsignmentMode;
  /** Only MLS-encrypted content (`wmp.encrypted`); clear content is -31003. Default false. */
  readonly encryptionRequired?: boolean;
}

export interface RegisteredDeliveryConfig {
  /** Delegation (core §3.3), default on; off, a message with `wmp.sender_delegate` is -31005. */
  readonly delegation?: boolean;
  /**
   * `verifiable_presentation` authorizations (`sdJwtDelegationChecker` of `@wmp/session/sd-jwt`):
   * the issuers trusted for principals. Without it only `mandate`s are taken.
   */
  readonly delegationCredentials?: DelegationPresentationChecker;
  /** Scheduled delivery (`wmp.deliver_after`), default on; off, a message that asks for it is -31005. */
  readonly scheduledDelivery?: boolean;
  /** The consignment modes served to recipients here; default all three. Others are -31005. */
  readonly consignmentModes?: readonly ConsignmentMode[];
  /**
   * The recipient assurance levels a message may ask for here (others are -31005); default the
   * levels the table and `anchorLevels` reach.
   */
  readonly assuranceLevels?: readonly AssuranceLevel[];
  /** Auth type -> assurance level (core §3.5.1); merged over `DEFAULT_ASSURANCE`. */
  readonly assurance?: Readonly<Record<string, AssuranceLevel>>;
  /**
   * Levels an authenticator itself may vouch for beyond the table (an x5c chain to an anchor the
   * operator rates `high`, `RelayAuthOptions.assuranceAnchors`): published in `assurance_levels`.
   */
  readonly anchorLevels?: readonly AssuranceLevel[];
  readonly recipientMetadata?: RecipientMetadata;
  /** The policies served (`applicable_policies` names others: -31005), published as `supported_policies`. */
  readonly supportedPolicies?: readonly string[];
  /**
   * Checks the chains of X.509 signatures: a principal's mandate, a recipient's signed acceptance
   * (`x5cSignatureVerifier` of `@wmp/session/x509`). Without it those are refused.
   */
  readonly signatureChains?: X5cChainVerifier;
  /** What the relay witnesses, for evidence records; default nothing is recorded. */
  readonly evidence?: RegisteredEvidenceHooks;
}

/** Every setting with its default. */
export interface ResolvedRegistered {
  readonly delegation: boolean;
  readonly delegationCredentials: DelegationPresentationChecker | undefined;
  readonly scheduledDelivery: boolean;
  readonly consignmentModes: readonly ConsignmentMode[];
  readonly assurance: Readonly<Record<string, AssuranceLevel>>;
  readonly assuranceLevels: readonly string[];
  /** The policies recipients here are served under (`supported_policies`). */
  readonly supportedPolicies: readonly string[];
  readonly recipientMetadata: Required<Omit<RecipientMetadata, 'acceptedContentTypes'>> & {
    readonly acceptedContentTypes: readonly string[] | undefined;
  };
  readonly signatureChains: X5cChainVerifier | undefined;
  readonly evidence: RegisteredEvidenceHooks;
}

/** The settings with their defaults; a bad one throws `RangeError` (a configuration mistake). */
export function resolveRegistered(config: RegisteredDeliveryConfig = {}, maxMessageBytes: number): ResolvedRegistered {
  const assurance = { ...DEFAULT_ASSURANCE, ...config.assurance };
  for (const [type, level] of Object.entries(assurance)) {
    if (!isAssuranceLevel(level)) throw new RangeError(`assurance of ${type}: ${String(level)} is not a level`);
  }
  const modes = config.consignmentModes ?? CONSIGNMENT_MODES;
  if (modes.length === 0 || !modes.every((m) => (CONSIGNMENT_MODES as readonly string[]).includes(m))) {
    throw new RangeError('consignmentModes: one or more of basic, consented, consented_signed');
  }
  const levels = config.assuranceLevels ?? reachableLevels(assurance, config.anchorLevels ?? []);
  if (!levels.every(isAssuranceLevel)) throw new RangeError('assuranceLevels: low, substantial or high');
  const metadata = config.recipientMetadata ?? {};
  const preference = metadata.consignmentPreference ?? (modes.includes('basic') ? 'basic' : modes[0]!);
  if (!modes.includes(preference)) throw new RangeError('recipientMetadata.consignmentPreference: a mode served');
  const maxSize = metadata.maxMessageSize ?? maxMessageBytes;
  if (!Number.isSafeInteger(maxSize) || maxSize < 1) throw new RangeError('recipientMetadata.maxMessageSize');
  return {
    delegation: config.delegation ?? true,
    delegationCredentials: config.delegationCredentials,
    scheduledDelivery: config.scheduledDelivery ?? true,
    consignmentModes: [...modes],
    assurance,
    assuranceLevels: [...levels],
    supportedPolicies: [...(config.supportedPolicies ?? [])],
    recipientMetadata: {
      acceptedContentTypes: metadata.acceptedContentTypes,
      maxMessageSize: Math.min(maxSize, maxMessageBytes),
      consignmentPreference: preference,
      encryptionRequired: metadata.encryptionRequired ?? false,
    },
    signatureChains: config.signatureChains,
    evidence: config.evidence ?? noEvidenceHooks,
  };
}

/**
 * The well-known `erds` object (core §7.5.1.1): what this relay serves, as it enforces it, and
 * what the operator publishes besides (`supported_policies`, an evidence repository, ...).
 */
export function erdsDocument(
  registered: ResolvedRegistered,
  published: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  return {
    ...published,
    consignment_modes: [...registered.consignmentModes],
    assurance_levels: [...registered.assuranceLevels],
    supported_policies: [...registered.supportedPolicies],
    delegation: registered.delegation,
    scheduled_delivery: registered.scheduledDelivery,
  };
}

/** The well-known `recipient_metadata` object (core §7.5.1.2). */
export function recipientMetadataDocument(registered: ResolvedRegistered): Record<string, unknown> {
  const m = registered.recipientMetadata;
  return {
    ...(m.acceptedContentTypes ? { accepted_content_types: [...m.acceptedContentTypes] } : {}),
    max_message_size: m.maxMessageSize,
    consignment_preferences: m.consignmentPreference,
    encryption_required: m.encryptionRequired,
  };
}
