// The budgets the federation benches give their relays: client and peer limits far out of the way
// (the limiters still run on every request), so the figure is the relays' work, not a limit.

/** A relay child's `limits` argument (JSON). */
export const FEDERATION_LIMITS = JSON.stringify({ requestsPerSecond: 1_000_000, requestBurst: 1_000_000 });

/** The federation timings that set a peer's budgets. */
export const FEDERATION_PEER_BUDGETS = {
  peerRequestsPerSecond: 1_000_000,
  peerRequestBurst: 1_000_000,
  peerBytesPerSecond: 1 << 30,
  peerBytesBurst: 1 << 30,
};
