/**
 * Partitioned queues (a peer relay's outbox, one part per remote recipient:
 * docs/federation-profile.md): a message may belong to a part of its queue, and each part, and
 * each sender's share of it, is counted under a JSON key (`partKeys`, never ambiguous). A row goes
 * when its count reaches 0. The part rows of a queue are only read or written under the lock of
 * that queue's `wmp_queues` row, as the sender rows are.
 */
export const V003_QUEUE_PARTS = `
ALTER TABLE wmp_messages ADD COLUMN part text;

CREATE TABLE wmp_queue_parts (
  recipient text NOT NULL,
  part text NOT NULL,
  count bigint NOT NULL,
  bytes bigint NOT NULL,
  PRIMARY KEY (recipient, part)
) WITH (fillfactor = 70);
`;
