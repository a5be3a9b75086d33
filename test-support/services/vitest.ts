// Helpers for vitest tests (they import `inject` from vitest; the rest of ./index.ts does not).
import { inject } from 'vitest';
import { type PostgresServer, startPostgres } from './postgres.js';
import { createDatabase } from './postgres-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared PostgreSQL server (./global-setup.ts); unset when the project has none. */
    wmpPostgresUrl: string | undefined;
  }
}

let own: Promise<PostgresServer> | undefined;

/**
 * A fresh, empty database for this test file; returns its URL. On the run's shared server when the
 * project lists ./global-setup.ts, else on a server of this test process's own (started on first
 * use, removed when the process exits). Never stop or kill the server behind it.
 */
export async function testDatabase(name?: string): Promise<string> {
  const shared = inject('wmpPostgresUrl');
  if (shared) return createDatabase(shared, name);
  own ??= startPostgres({ name: 'file' });
  return (await own).createDatabase(name);
}
