// Single-use values (box request nonces, DPoP `jti`s, statuses passed on from peers): the contract
// is @wmp/jcs-signing's own `ReplayCache` (`useOnce(value, expiresAt, scope?)`, check and record in
// one atomic step, `ReplayCacheFullError` rather than forget an unexpired entry), the layer both
// the box's `verifyRequest` and DPoP reach, so each takes any adapter.
// The coordination's three caches (`nonces`, `replays`, `statusClaims`) are each one.

/** Default bound of the cache of statuses passed on from peers (2 min each: about 4k a second). */
export const DEFAULT_STATUS_CLAIMS_MAX_ENTRIES = 500_000;
