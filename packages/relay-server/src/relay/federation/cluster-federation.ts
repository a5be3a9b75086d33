import { BoundedSet } from '@wmp/jsonrpc-envelope';
import type { Coordination } from '../../coordination/contracts/coordination.js';
import type { RelayStores } from '../../storage/contracts/relay-stores.js';
import type { FederationDeps } from './federation.js';

/** Statuses from peers remembered by one process (the oldest are forgotten first). */
const RECENT_PEER_STATUSES = 100_000;

/** One process claims in its own memory: copies come from links that overlap, within moments. */
function claimLocally(): (key: string) => Promise<boolean> {
  const recent = new BoundedSet<string>(RECENT_PEER_STATUSES);
  return async (key) => {
    if (recent.has(key)) return false;
    recent.add(key);
    return true;
  };
}

/**
 * What federation takes from the stores and the coordination (docs/federation-profile.md, "On a
 * cluster"): each peer's outbox is sent by one node at a time (under the stores' sweep lock, when
 * they have one), each status a peer sends back is passed on once for the relay (the coordination's
 * single-use cache), and a `queued` status reaches a sender live on another node.
 */
export function clusterFederation(
  stores: RelayStores,
  coordination: Coordination,
  cluster: boolean,
): Pick<FederationDeps, 'lease' | 'claim' | 'onlineElsewhere'> {
  const lock = stores.withSweepLock;
  return {
    ...(lock ? { lease: (name: string, pass: () => Promise<void>) => lock.call(stores, name, pass) } : {}),
    claim: cluster ? (key, expiresAt) => coordination.statusClaims.useOnce(key, expiresAt) : claimLocally(),
    onlineElsewhere: async (identity) => {
      if (!cluster) return false;
      const nodes = await coordination.presence.nodesOf(identity).catch(() => [] as readonly string[]);
      return nodes.some((n) => n !== coordination.nodeId);
    },
  };
}
