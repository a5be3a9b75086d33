import { type RelayHop, relayChainWith } from '@wmp/jcs-signing';
import type { JsonRpcNotification } from '@wmp/jsonrpc-envelope';

/**
 * A message's params as the relay passes them on: the sender's own, unchanged, with this relay's
 * relay_chain entry in place of any chain a client sent (a client is no relay).
 */
export async function withRelayEntry(
  method: string,
  params: Record<string, unknown>,
  hop: RelayHop,
): Promise<Record<string, unknown>> {
  const { relay_chain: _claimed, ...meta } = (params.wmp ?? {}) as Record<string, unknown>;
  const wmp: Record<string, unknown> = { ...meta };
  const message: JsonRpcNotification = { jsonrpc: '2.0', method, params: { ...params, wmp } };
  wmp.relay_chain = await relayChainWith(message, hop);
  return message.params as Record<string, unknown>;
}
