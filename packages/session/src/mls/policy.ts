import { coreMethods, type MethodRegistry, type Security } from '@wmp/jsonrpc-envelope';

/**
 * Whether a method carries application content (core §5.2): its descriptor's `content` rules.
 * Such methods are MLS-encrypted under the `mls` mode and, under `mls-optional`, when one of their
 * capabilities is listed. Everything else is control traffic that the responder must read to do
 * its job and always travels in the clear.
 */
export function isContentMethod(method: string, methods: MethodRegistry = coreMethods): boolean {
  return methods.get(method)?.content !== undefined;
}

/** Fields copied in the clear next to `ciphertext`: what a relay routes on. */
export function clearFieldsOf(method: string, methods: MethodRegistry = coreMethods): readonly string[] {
  return methods.get(method)?.content?.clear ?? [];
}

/**
 * The capability a method's content counts under even when no other is exercised: the content
 * rule's own (a deliver is `messaging`), else the capability calling the method needs.
 */
export function baseCapabilities(method: string, methods: MethodRegistry = coreMethods): string[] {
  const spec = methods.get(method);
  const capability = spec?.content?.capability ?? spec?.capability;
  return capability === undefined ? [] : [capability];
}

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
  methods: MethodRegistry = coreMethods,
): string | undefined {
  if (!security || !isContentMethod(method, methods)) return undefined;
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
  methods: MethodRegistry = coreMethods,
): string[] {
  const used = baseCapabilities(method, methods);
  if (method === 'wmp.message.deliver') {
    // Participants unknown (a session restored without them): any recipient may be a third party.
    const to = Array.isArray(params.to) ? params.to : [];
    if (to.some((r) => participants === undefined || !participants.includes(r as string))) used.push('relay');
  }
  if (method === 'wmp.flow.start' && typeof params.flow_type === 'string') used.push(params.flow_type);
  return used;
}

/**
 * The capabilities an initiator holds an incoming content message to: its method's (a deliver is
 * `messaging`: a plain message that reached us as `relay` traffic was already judged by the
 * responder on the sender's session; flow notifications are `flows`).
 */
export function incomingCapabilities(method: string, methods: MethodRegistry = coreMethods): string[] {
  return baseCapabilities(method, methods);
}
