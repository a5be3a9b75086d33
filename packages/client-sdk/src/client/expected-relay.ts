import type { Endpoint } from './endpoint.js';
import type { ExpectedRelay } from './types.js';

/**
 * Who the relay must prove to be: what the application said, else the `relay_id` its well-known
 * document named (read when the URL was a bare origin), else nobody (`false`: never asked).
 */
export function expectedRelay(
  option: ExpectedRelay | false | undefined,
  endpoint: Endpoint,
): ExpectedRelay | undefined {
  if (option === false) return undefined;
  if (option !== undefined) return option;
  return endpoint.relayId === undefined ? undefined : { id: endpoint.relayId };
}
