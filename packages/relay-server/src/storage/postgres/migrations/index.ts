import { V001_INITIAL } from './v001-initial.js';
import { V002_OHAN_BOX } from './v002-ohan-box.js';
import { V003_QUEUE_PARTS } from './v003-queue-parts.js';
import { V004_ARRIVAL_TIMES } from './v004-arrival-times.js';
import { V005_EVIDENCE } from './v005-evidence.js';
import { V006_DUE_TIMES } from './v006-due-times.js';

/**
 * The relay's PostgreSQL schema, one migration per version, applied in order at start (under an
 * advisory lock, each in its own transaction, recorded in `wmp_schema_version`). Migrations are
 * TypeScript string constants, not .sql files, so the tsup bundle and the sources (tests, tsx)
 * carry them alike with no loader or file copy. Append a version; never edit a released one.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: 'initial', sql: V001_INITIAL },
  { version: 2, name: 'ohan box', sql: V002_OHAN_BOX },
  { version: 3, name: 'queue parts', sql: V003_QUEUE_PARTS },
  { version: 4, name: 'arrival times', sql: V004_ARRIVAL_TIMES },
  { version: 5, name: 'evidence', sql: V005_EVIDENCE },
  { version: 6, name: 'due times', sql: V006_DUE_TIMES },
]);

/** The version a database has once every migration above ran. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;
