import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pollUntil } from './common.js';
import { isProcessAlive, type PostgresServer, ServiceBinaryMissingError, startPostgres } from './index.js';
import { testDatabase } from './vitest.js';

async function query<T = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('startPostgres', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres({ name: 'harness' });
  }, 60_000);
  afterAll(() => server?.destroy());

  it('answers at its url on 127.0.0.1 with fsync on', async () => {
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
    const [row] = await query<{ major: number; fsync: string; listen: string; addr: string }>(
      server.url,
      `select current_setting('server_version_num')::int / 10000 as major, current_setting('fsync') as fsync,
              current_setting('listen_addresses') as listen, host(inet_server_addr()) as addr`,
    );
    expect(row).toEqual({ major: server.version, fsync: 'on', listen: '127.0.0.1', addr: '127.0.0.1' });
    expect(server.version).toBeGreaterThanOrEqual(15);
    expect(server.running).toBe(true);
    expect(server.pid).toBeGreaterThan(0);
  });

  it('createDatabase returns a fresh database each time', async () => {
    const a = await server.createDatabase('iso');
    const b = await server.createDatabase('iso');
    expect(a).not.toBe(b);
    await query(a, 'create table only_in_a (x int)');
    const inB = await query(b, "select count(*)::int as n from pg_tables where tablename = 'only_in_a'");
    expect(inB).toEqual([{ n: 0 }]);
  });

  it('keeps committed data through an immediate stop (a crash) and a restart', async () => {
    const url = await server.createDatabase('crash');
    await query(url, 'create table t (v text)');
    await query(url, "insert into t values ('committed')");
    const open = new pg.Client({ connectionString: url });
    const errors: Error[] = [];
    open.on('error', (e) => errors.push(e));
    await open.connect();
    await open.query("begin; insert into t values ('uncommitted')");

    await server.stop({ mode: 'immediate' });
    expect(server.running).toBe(false);
    await expect(open.query('select 1')).rejects.toThrow();
    await server.start();

    expect(await query(url, 'select v from t order by v')).toEqual([{ v: 'committed' }]);
    await open.end().catch(() => {});
  }, 60_000);

  it('keeps committed data through kill -9 of the postmaster and every backend', async () => {
    const url = await server.createDatabase('kill');
    await query(url, 'create table t (v int)');
    await query(url, 'insert into t select generate_series(1, 1000)');
    const before = server.pid!;
    const open = new pg.Client({ connectionString: url });
    open.on('error', () => {});
    await open.connect();
    const [{ backend }] = (await open.query<{ backend: number }>('select pg_backend_pid() as backend')).rows as [
      { backend: number },
    ];
    // A backend busy computing does not look for its postmaster's death: only a kill stops it.
    const busy = open.query('select count(*) from generate_series(1, 100000000000)').catch(() => 'ended');
    await pollUntil('the busy query to run', async () => {
      const [row] = await query<{ state: string }>(url, 'select state from pg_stat_activity where pid = $1', [backend]);
      return row?.state === 'active' ? true : undefined;
    });

    await server.kill();
    expect(server.running).toBe(false);
    for (const pid of [before, backend]) expect(isProcessAlive(pid)).toBe(false);
    await server.start();

    expect(server.pid).not.toBe(before);
    expect(await query(url, 'select count(*)::int as n from t')).toEqual([{ n: 1000 }]);
    expect(await busy).toBe('ended');
    await open.end().catch(() => {});
  }, 60_000);

  it('stops fast and starts again on the same port', async () => {
    await server.stop();
    await expect(query(server.url, 'select 1')).rejects.toThrow();
    await server.start();
    expect(await query(server.url, 'select 1 as one')).toEqual([{ one: 1 }]);
  }, 60_000);

  it('destroy() removes its directory; start() afterwards is an error', async () => {
    const other = await startPostgres({ name: 'destroyed' });
    await other.destroy();
    expect(existsSync(other.baseDir)).toBe(false);
    await expect(other.start()).rejects.toThrow(/after destroy/);
  }, 60_000);
});

describe('testDatabase', () => {
  it("gives each caller a fresh database on the run's shared server", async () => {
    const shared = inject('wmpPostgresUrl');
    expect(shared).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const url = await testDatabase('shared');
    expect(new URL(url).port).toBe(new URL(shared!).port);
    expect(await query(url, 'select current_database() as db')).toEqual([{ db: new URL(url).pathname.slice(1) }]);
  });
});

describe('without PostgreSQL installed', () => {
  it('fails with ServiceBinaryMissingError naming the Debian package', async () => {
    const error = await startPostgres({ binDir: '/nonexistent/postgresql/bin' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceBinaryMissingError);
    expect((error as ServiceBinaryMissingError).debianPackage).toBe('postgresql');
    expect((error as Error).message).toContain('apt-get install -y postgresql');
  });
});
