import type { Security } from '@wmp/jsonrpc-envelope';

/**
 * The methods that carry application content (core §5.2), and so are MLS-encrypted under the
 * `mls` mode and, under `mls-optional`, when one of their capabilities is listed. Everything else
 * is control traffic that the responder must read to do its job and always travels in the clear:
 * `wmp.session.*`, `wmp.capability.*`, `wmp.message.ack`/`status`/`poll`/`fetch`,
 * `wmp.flow.cancel` (an id and a reason), `wmp.resolve` (a lookup answered by the responder
 * itself, whose result is a plain JSON-RPC result), `wmp.mls.*` (already MLS messages) and the
 * relay's own methods.
 */
export const CONTENT_METHODS: ReadonlySet<string> = new Set([
  'wmp.message.deliver',
  'wmp.flow.start',
  'wmp.flow.action',
  'wmp.flow.progress',
  'wmp.flow.complete',
  'wmp.flow.error',
]);

/** Fields copied in the clear next to `ciphertext`, by method: what a relay routes on. */
export const CLEAR_ROUTING_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'wmp.message.deliver': ['to'],
};

/** Whether params claim MLS encryption (`wmp.encrypted: true`). */
export function isEncrypted(params: unknown): boolean {
  const wmp = (params as { wmp?: { encrypted?: unknown } } | null | undefined)?.wmp;
  return wmp?.encrypted === true;
}

/**
 * The capability whose security rule requires this message to be encrypted, or undefined when it
 * may travel in the clear (core §4.2.3, §8.4). `capabilities` are the ones the message exercises,
 * most specific last; under `mls` the first one names the refusal.
 */
export function encryptionRequiredFor(
  security: Security | undefined,
  method: string,
  capabilities: readonly string[],
): string | undefined {
  if (!security || !CONTENT_METHODS.has(method)) return undefined;
  if (security.mode === 'mls') return capabilities[0] ?? 'messaging';
  if (security.mode === 'mls-optional') {
    const listed = security.encrypted_capabilities ?? [];
    return capabilities.find((c) => listed.includes(c));
  }
  return undefined;
}

/**
 * The capabilities an initiator's outgoing content message exercises, by the responder's rules
 * (see `capabilitiesUsed`): a deliver is `messaging`, and `relay` too when a recipient is not one
 * of the session's participants (the initiator and those it listed at create, or those a join
 * answer named; any recipient when they are unknown); a flow start also
 * exercises its type's capability, which the initiator names by the flow type.
 */
export function outgoingCapabilities(
  method: string,
  params: Record<string, unknown>,
  participants: readonly string[] | undefined,
): string[] {
  if (method === 'wmp.message.deliver') {
    // Participants unknown (a session restored without them): any recipient may be a third party.
    const to = Array.isArray(params.to) ? params.to : [];
    const relayed = to.some((r) => participants === undefined || !participants.includes(r as string));
    return relayed ? ['messaging', 'relay'] : ['messaging'];
  }
  if (method === 'wmp.flow.start' && typeof params.flow_type === 'string') return ['flows', params.flow_type];
  if (method.startsWith('wmp.flow.')) return ['flows'];
  return [];
}

/**
 * The capabilities an initiator holds an incoming content message to: a deliver is `messaging`
 * (a plain message that reached us as `relay` traffic was already judged by the responder on the
 * sender's session), flow notifications are `flows`.
 */
export function incomingCapabilities(method: string): string[] {
  if (method === 'wmp.message.deliver') return ['messaging'];
  if (method.startsWith('wmp.flow.')) return ['flows'];
  return [];
}
