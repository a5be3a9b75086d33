/**
 * The `data` of refusals whose code says it all (every refusal carries a `reason`:
 * docs/wmp-profile.md). -31000 has one reason whatever the cause (no such session, a closed one, a
 * resumption token that is not current), so that it never tells whether a session exists (core §4.5.4).
 */
export const UNKNOWN_SESSION: Readonly<{ reason: string }> = Object.freeze({ reason: 'unknown session' });
export const SESSION_EXPIRED: Readonly<{ reason: string }> = Object.freeze({ reason: 'session expired' });
