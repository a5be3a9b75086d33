// Vitest globalSetup: one PostgreSQL server for every test file of the projects that list this
// file (vitest.workspace.ts, `sharedPostgres`), started once per run (initdb is ~1.5 s; a fresh
// database on it is ~0.2 s). Tests get their own database with `testDatabase()` (./vitest.ts).
// With WMP_TEST_POSTGRES_URL set, that server is used instead and nothing is started.
//
// Tests that stop, crash or kill PostgreSQL must not use the shared server: they start their own
// with startPostgres().
import type { TestProject } from 'vitest/node';
import { type PostgresServer, startPostgres } from './postgres.js';
import './vitest.js'; // the ProvidedContext type

// Several projects may list this file; they share one server (globalSetup runs in the main process).
interface Shared {
  server: Promise<PostgresServer> | undefined;
  users: number;
}
const key = Symbol.for('wmp.test-support.shared-postgres');
const shared: Shared = ((globalThis as Record<symbol, unknown>)[key] as Shared | undefined) ?? {
  server: undefined,
  users: 0,
};
(globalThis as Record<symbol, unknown>)[key] = shared;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.WMP_TEST_POSTGRES_URL;
  if (external) {
    project.provide('wmpPostgresUrl', external);
    return async () => {};
  }
  shared.users++;
  shared.server ??= startPostgres({ name: 'shared' });
  const server = await shared.server;
  project.provide('wmpPostgresUrl', server.url);
  return async () => {
    if (--shared.users > 0) return;
    shared.server = undefined;
    await server.destroy();
  };
}
