import { OHAN_BOX_SCHEMA_V1 } from '../postgres-box-schema.js';

/**
 * The OHAN box's tables (`postgres-box-schema.ts`), so the relay's one migration runner makes the
 * box of a cluster node with the rest of the schema.
 */
export const V002_OHAN_BOX = OHAN_BOX_SCHEMA_V1;
