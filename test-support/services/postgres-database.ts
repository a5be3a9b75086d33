// Fresh databases on a test PostgreSQL server, with names unique across test processes.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export function safeName(name: string, fallback: string): string {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 24);
  return clean.length > 0 ? clean : fallback;
}

let databaseCounter = 0;

/**
 * Creates a fresh database on the server at `serverUrl` and returns its URL. `name` is a prefix;
 * the suffix (pid, counter, random) keeps names unique across test processes sharing a server.
 */
export async function createDatabase(serverUrl: string, name = 'test'): Promise<string> {
  const database =
    `${safeName(name, 'test').toLowerCase()}_${process.pid}_${++databaseCounter}_${randomBytes(3).toString('hex')}`.slice(
      0,
      63,
    );
  const client = new pg.Client({ connectionString: serverUrl });
  client.on('error', () => {}); // a server killed under an idle admin connection
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
