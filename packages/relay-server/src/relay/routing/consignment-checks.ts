// What the recipient's relay refuses before it stores anything for a recipient here (core §3.5,
// §3.5.1, §7.5.1.1, §7.5.1.2): a consignment mode, assurance level or policy it does not serve
// (-31005, as core §3.5 says), and what its published recipient metadata does not take.
import { CapabilityNotSupportedError, EncryptionRequiredError, InvalidRequestError } from '@wmp/jsonrpc-envelope';
import type { ResolvedRegistered } from '../support/registered.js';
import type { RoutedMessage } from './routed-message.js';

export type ConsignmentPolicy = Pick<
  ResolvedRegistered,
  'consignmentModes' | 'assuranceLevels' | 'supportedPolicies' | 'recipientMetadata'
>;

/** Throws the refusal of a deliver of `bytes` (as routed) for a recipient here, if any. */
export function checkConsignment(message: RoutedMessage, bytes: number, policy: ConsignmentPolicy): void {
  if (message.method !== 'wmp.message.deliver') return;
  const p = message.params;
  const unsupported: string[] = [];
  const mode = p.consignment_mode;
  if (mode !== undefined && !(policy.consignmentModes as readonly unknown[]).includes(mode)) {
    unsupported.push('consignment_mode');
  }
  const level = p.recipient_assurance_level;
  if (level !== undefined && !policy.assuranceLevels.includes(level as string)) {
    unsupported.push('recipient_assurance_level');
  }
  const policies = p.applicable_policies;
  if (Array.isArray(policies) && policies.some((x) => !policy.supportedPolicies.includes(x as string))) {
    unsupported.push('applicable_policies');
  }
  if (unsupported.length > 0) throw new CapabilityNotSupportedError({ capability: 'erds', unsupported });
  const metadata = policy.recipientMetadata;
  const types = metadata.acceptedContentTypes;
  if (types !== undefined && p.ciphertext === undefined && !types.includes(String(p.content_type ?? ''))) {
    throw new CapabilityNotSupportedError({ capability: 'recipient_metadata', unsupported: ['content_type'] });
  }
  if (metadata.encryptionRequired && p.wmp.encrypted !== true) {
    throw new EncryptionRequiredError({ capability: 'messaging', reason: 'encryption_required' });
  }
  if (bytes > metadata.maxMessageSize) {
    throw new InvalidRequestError({ reason: 'message too large', max_size: metadata.maxMessageSize });
  }
}
