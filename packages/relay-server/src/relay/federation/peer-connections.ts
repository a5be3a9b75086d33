import type { Connection } from '@wmp/session';
import type { Federation } from './federation.js';

/** The identities a connection authenticated (on any session it carries). */
function identitiesOn(connection: Connection): Set<string> {
  const ids = new Set<string>();
  if (connection.adopted !== undefined) ids.add(connection.adopted);
  for (const { identity } of connection.sessions.values()) if (identity !== undefined) ids.add(identity);
  return ids;
}

/** The relay_id of the configured peer `connection` authenticated as (its link to us), if any. */
export function knownPeerOn(federation: Pick<Federation, 'isKnownPeer'>, connection: Connection): string | undefined {
  for (const id of identitiesOn(connection)) if (federation.isKnownPeer(id)) return id;
  return undefined;
}

/**
 * The relay_id of the peer relay `connection` is the link of (a configured peer, or any relay in
 * `open` mode), or undefined.
 */
export async function peerOn(
  federation: Pick<Federation, 'forwardsFor' | 'peerOriginOf'>,
  connection: Connection,
): Promise<string | undefined> {
  for (const id of identitiesOn(connection)) {
    if (federation.forwardsFor(id, 'wmp.message.deliver') && (await federation.peerOriginOf(id)) !== undefined)
      return id;
  }
  return undefined;
}
