/**
 * Scheduled delivery (core §3.2 `deliver_after`): a message may be held until it falls due.
 * `claimDue` hands due ones out across the cluster (FOR UPDATE SKIP LOCKED: two nodes never claim
 * one row) and moves `due_at` on by a lease while the claimer routes it, so a node that dies with
 * a claim leaves the message due again. Only held messages have one (a partial index).
 */
export const V006_DUE_TIMES = `
ALTER TABLE wmp_messages ADD COLUMN due_at bigint;
CREATE INDEX wmp_messages_due ON wmp_messages (due_at) WHERE due_at IS NOT NULL;
`;
