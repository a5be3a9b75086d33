// Registered delivery (core §3.3-§3.5, §7.5.1): delegation, scheduled delivery, the assurance
// table, recipient metadata, as flags. Pure like config.ts: the files are read at start.
import { ASSURANCE_LEVELS, type AssuranceLevel, CONSIGNMENT_MODES, type ConsignmentMode } from '@wmp/relay-server';
import type { OptionSpec } from './config-spec.js';

/** Registered delivery, as the flags gave it. */
export interface RegisteredSettings {
  readonly delegation: boolean;
  readonly scheduledDelivery: boolean;
  /** Auth type -> level, over the library's table. */
  readonly assurance: Readonly<Record<string, AssuranceLevel>>;
  /** PEM bundle: x5c and mtls chains ending at these anchors authenticate at `high`. */
  readonly highAssuranceAnchorsFile: string | undefined;
  /** Principal (or prefix*) -> issuers trusted to vouch for it in SD-JWT VC delegations. */
  readonly delegationIssuers: Readonly<Record<string, readonly string[]>>;
  readonly acceptedContentTypes: readonly string[] | undefined;
  readonly recipientMaxMessageSize: number | undefined;
  readonly consignmentPreference: ConsignmentMode | undefined;
  readonly encryptionRequired: boolean;
}

export const REGISTERED_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'no-delegation',
    kind: 'bool',
    help: 'turn delegation off (erds.delegation false): a message with wmp.sender_delegate is refused with -31005',
    default: 'off',
  },
  {
    flag: 'no-scheduled-delivery',
    kind: 'bool',
    help: 'turn scheduled delivery off (erds.scheduled_delivery false): a message with wmp.deliver_after is refused with -31005',
    default: 'off',
  },
  {
    flag: 'assurance',
    kind: 'list',
    help: 'assurance level of an auth type, <type>=low|substantial|high (repeatable; default signed_challenge, bearer, dpop low; x5c, mtls substantial)',
    default: 'none',
  },
  {
    flag: 'high-assurance-anchors',
    kind: 'string',
    help: 'PEM file of CAs (also in --trust-anchors or --tls-client-ca) whose x5c and mtls chains authenticate at high',
    default: 'none',
  },
  {
    flag: 'delegation-issuer',
    kind: 'list',
    help: 'an issuer trusted to vouch for principals in SD-JWT VC delegations, <principal or prefix*>=<issuer> (repeatable)',
    default: 'none',
  },
  {
    flag: 'accepted-content-types',
    kind: 'list',
    help: 'content types taken for recipients here (recipient_metadata; repeatable)',
    default: 'none (any type)',
  },
  {
    flag: 'recipient-max-message-size',
    kind: 'bytes',
    help: 'largest message taken for a recipient here (recipient_metadata.max_message_size)',
    default: '<--max-message-bytes>',
    min: 1,
  },
  {
    flag: 'consignment-preference',
    kind: 'string',
    help: 'consignment mode of a message that names none: basic, consented or consented_signed',
    default: '<basic, else the first mode served>',
  },
  {
    flag: 'encryption-required',
    kind: 'bool',
    help: 'take only MLS-encrypted content for recipients here (recipient_metadata.encryption_required)',
    default: 'off',
  },
];

/** How the settings are read: text of a flag or variable, its items (a list), a boolean, a byte size. */
export interface RegisteredReader {
  text(flag: string): string | undefined;
  list(flag: string): readonly string[];
  bool(flag: string): boolean | undefined;
  number(flag: string): number | undefined;
}

/** `<key>=<value>` pairs of a list flag; a malformed one fails naming the flag. */
function pairs(flag: string, items: readonly string[], fail: (message: string) => never): [string, string][] {
  return items.map((item) => {
    const at = item.indexOf('=');
    if (at <= 0 || at === item.length - 1) fail(`--${flag}: "${item}" is not <name>=<value>`);
    return [item.slice(0, at).trim(), item.slice(at + 1).trim()];
  });
}

export function registeredSettings(read: RegisteredReader, fail: (message: string) => never): RegisteredSettings {
  const assurance: Record<string, AssuranceLevel> = {};
  for (const [type, level] of pairs('assurance', read.list('assurance'), fail)) {
    if (!(ASSURANCE_LEVELS as readonly string[]).includes(level)) {
      fail(`--assurance: "${level}" is not one of ${ASSURANCE_LEVELS.join(', ')}`);
    }
    assurance[type] = level as AssuranceLevel;
  }
  const delegationIssuers: Record<string, string[]> = {};
  for (const [principal, issuer] of pairs('delegation-issuer', read.list('delegation-issuer'), fail)) {
    delegationIssuers[principal] = [...(delegationIssuers[principal] ?? []), issuer];
  }
  const preference = read.text('consignment-preference');
  if (preference !== undefined && !(CONSIGNMENT_MODES as readonly string[]).includes(preference)) {
    fail(`--consignment-preference: "${preference}" is not one of ${CONSIGNMENT_MODES.join(', ')}`);
  }
  const anchors = read.text('high-assurance-anchors');
  if (anchors !== undefined && anchors.trim() === '') fail('--high-assurance-anchors: must not be empty');
  const types = read.list('accepted-content-types');
  return {
    delegation: read.bool('no-delegation') !== true,
    scheduledDelivery: read.bool('no-scheduled-delivery') !== true,
    assurance,
    highAssuranceAnchorsFile: anchors,
    delegationIssuers,
    acceptedContentTypes: types.length === 0 ? undefined : types,
    recipientMaxMessageSize: read.number('recipient-max-message-size'),
    consignmentPreference: preference as ConsignmentMode | undefined,
    encryptionRequired: read.bool('encryption-required') ?? false,
  };
}
