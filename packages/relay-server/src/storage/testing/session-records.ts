import { type SessionRecord, tokenHash } from '@wmp/session';

/**
 * An active session record of Alice's alone (the one resumption token, `rt-<id>`), expiring in
 * an hour: what the inventory suite and the session cache's tests store.
 */
export function aliceSession(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  const now = Date.now();
  return {
    id,
    version: '0.1',
    initiator: 'did:key:z6MkAlice',
    participants: ['did:key:z6MkAlice'],
    capabilities: { messaging: {} },
    security: { mode: 'tls' },
    state: 'active',
    authenticated: ['did:key:z6MkAlice'],
    challenge: undefined,
    resumptionTokens: [{ hash: tokenHash(`rt-${id}`), identity: 'did:key:z6MkAlice' }],
    createdAt: now,
    expiresAt: now + 3600_000,
    ...overrides,
  } as SessionRecord;
}
