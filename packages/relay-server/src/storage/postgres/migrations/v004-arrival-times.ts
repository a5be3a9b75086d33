import { OHAN_BOX_SCHEMA_V2 } from '../postgres-box-schema.js';

/**
 * When each queued message and each box event arrived (`wmp-relay admin queues` shows a queue's
 * oldest message's age). Filled by the database's clock at insert, so the batched inserts stay
 * as they are; rows of earlier versions read 0 (unknown).
 */
export const V004_ARRIVAL_TIMES = `
ALTER TABLE wmp_messages ADD COLUMN queued_at bigint NOT NULL DEFAULT 0;
ALTER TABLE wmp_messages ALTER COLUMN queued_at SET DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
${OHAN_BOX_SCHEMA_V2}`;
