import { CapabilityNotSupportedError } from '@wmp/jsonrpc-envelope';

/** A message's ERDS requests (core §3.5): what the downstream relay's `erds` must list. */
export function hasErdsRequests(params: Record<string, unknown>): boolean {
  const wmp = (params.wmp ?? {}) as Record<string, unknown>;
  return (
    params.consignment_mode !== undefined ||
    params.recipient_assurance_level !== undefined ||
    params.applicable_policies !== undefined ||
    wmp.deliver_after !== undefined ||
    wmp.sender_delegate !== undefined
  );
}

function listed(erds: Record<string, unknown> | undefined, member: string, value: unknown): boolean {
  const list = erds?.[member];
  return Array.isArray(list) && list.includes(value);
}

/**
 * What of a message's ERDS requests the downstream `erds` object does not list (core
 * §7.5.1.1): `consignment_mode` in `consignment_modes`, `recipient_assurance_level` in
 * `assurance_levels`, every `applicable_policies` entry in `supported_policies`, a
 * `deliver_after` under `scheduled_delivery: true`, a `sender_delegate` under `delegation: true`.
 * A downstream that publishes no `erds` lists nothing.
 */
export function erdsUnsupported(params: Record<string, unknown>, erds: Record<string, unknown> | undefined): string[] {
  const unsupported: string[] = [];
  const mode = params.consignment_mode;
  if (mode !== undefined && !listed(erds, 'consignment_modes', mode)) unsupported.push('consignment_mode');
  const level = params.recipient_assurance_level;
  if (level !== undefined && !listed(erds, 'assurance_levels', level)) unsupported.push('recipient_assurance_level');
  const policies = params.applicable_policies;
  if (Array.isArray(policies) && policies.some((p) => !listed(erds, 'supported_policies', p))) {
    unsupported.push('applicable_policies');
  }
  // Scheduled delivery and delegation are the recipient's relay's to honour: it must say it does.
  const wmp = (params.wmp ?? {}) as Record<string, unknown>;
  if (wmp.deliver_after !== undefined && erds?.scheduled_delivery !== true) unsupported.push('scheduled_delivery');
  if (wmp.sender_delegate !== undefined && erds?.delegation !== true) unsupported.push('delegation');
  return unsupported;
}

/** -31005 naming what the downstream relay does not support (`data.unsupported`). */
export function erdsRefusal(unsupported: readonly string[]): InstanceType<typeof CapabilityNotSupportedError> {
  return new CapabilityNotSupportedError({ capability: 'erds', unsupported: [...unsupported] });
}
