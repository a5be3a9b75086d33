import pg from 'pg';
import { StoreClosedError, StoreInputError, StoreSchemaError, StoreUnavailableError } from '../errors.js';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations/index.js';
import { unavailable } from './postgres-failures.js';
import { MAX_WRITE_BATCH, PostgresWriter, type WriterStats } from './postgres-writer.js';
import { advisoryKey } from './write-locks.js';

export interface PostgresDatabaseOptions {
  /** `postgres://user:password@host:port/database` (anything node-postgres takes as `connectionString`). */
  readonly url: string;
  /** Connections of the read pool (default 10); the writer has one more of its own. */
  readonly poolSize?: number;
  /** The writer's connection in pipeline mode (default true; see docs/decisions.md). */
  readonly pipeline?: boolean;
  /** Operations per transaction, 1..100 (default 100). */
  readonly maxBatch?: number;
  /** How long a connection attempt may take (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** Server-side `statement_timeout` of every connection (default 30 s). */
  readonly statementTimeoutMs?: number;
  /** Server-side `lock_timeout` of the writer (default 10 s): a stuck lock fails the batch, never hangs it. */
  readonly lockTimeoutMs?: number;
  /** `application_name` (default `wmp-relay`), to tell the relay's connections apart in `pg_stat_activity`. */
  readonly applicationName?: string;
}

/** bigint (int8) columns and count(*) as numbers: seqs, sizes and ms times stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Advisory lock (session level) held while migrations run: N nodes starting at once migrate once. */
const MIGRATION_LOCK = advisoryKey('wmp-relay:migrate');

/**
 * One node's handle on the relay's PostgreSQL database: a `Pool` for reads, one dedicated writer
 * connection (`PostgresWriter`, batched, `synchronous_commit=on`), the schema migrated at open
 * under an advisory lock, and advisory locks for the sweepers (`withSweepLock`). The stores of
 * `PostgresStore` share it.
 */
export class PostgresDatabase {
  readonly writer: PostgresWriter;
  readonly #pool: pg.Pool;
  #closing: Promise<void> | undefined;

  private constructor(pool: pg.Pool, writer: PostgresWriter) {
    this.#pool = pool;
    this.writer = writer;
  }

  /**
   * Connects, migrates the schema (or refuses a newer one with `StoreSchemaError`) and opens the
   * writer's connection. An unreachable server, refused credentials or a missing database reject
   * with `StoreUnavailableError` (its `reason` tells which); a URL node-postgres cannot read with
   * `StoreInputError`.
   */
  static async open(options: PostgresDatabaseOptions): Promise<PostgresDatabase> {
    const config = clientConfig(options);
    const poolSize = options.poolSize ?? 10;
    if (!Number.isSafeInteger(poolSize) || poolSize < 1) throw new RangeError('poolSize must be a positive integer');
    await withClient(config, (client) => migrate(client));
    const lockTimeout = options.lockTimeoutMs ?? 10_000;
    const writer = new PostgresWriter(
      {
        pipeline: options.pipeline ?? true,
        connect: async () => {
          const client = new pg.Client({ ...config, pipeline: options.pipeline ?? true } as pg.ClientConfig);
          client.on('error', () => undefined);
          await client.connect();
          try {
            // Acknowledged means on disk, whatever the server's default; never wait on a stuck lock forever.
            await client.query('SET synchronous_commit = on');
            await client.query(`SET lock_timeout = ${Math.trunc(lockTimeout)}`);
          } catch (error) {
            await client.end().catch(() => undefined);
            throw error;
          }
          return client;
        },
      },
      options.maxBatch ?? MAX_WRITE_BATCH,
    );
    const pool = new pg.Pool({ ...config, max: poolSize });
    // An idle pooled connection that breaks (a restart) is dropped by the pool; without a listener it would throw.
    pool.on('error', () => undefined);
    try {
      await writer.connect().catch((error: unknown) => {
        throw unavailable(error) ?? error;
      });
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return new PostgresDatabase(pool, writer);
  }

  get closed(): boolean {
    return this.writer.closed;
  }

  /** The read pool, for an adapter on the same database that runs its own transactions (the box). */
  get pool(): pg.Pool {
    return this.#pool;
  }

  get writeStats(): WriterStats {
    return this.writer.stats;
  }

  /** A read on the pool (committed state only); an unreachable server is `StoreUnavailableError`. */
  async read<R extends pg.QueryResultRow>(text: string, values: readonly unknown[], name?: string): Promise<R[]> {
    if (this.closed) throw new StoreClosedError();
    const config: pg.QueryConfig = { text, values: values as unknown[] };
    if (name !== undefined) config.name = name;
    try {
      return (await this.#pool.query<R>(config)).rows;
    } catch (error) {
      throw unavailable(error) ?? error;
    }
  }

  /**
   * Runs `fn` while this node holds the cluster-wide lock `name` (a session-level advisory lock,
   * `pg_try_advisory_lock`, on a pooled connection kept for the call), so one node of a cluster
   * sweeps at a time; resolves `{ ran: false }` at once when another node holds it. If that
   * connection breaks, the server drops the lock and another node may start: sweeps stay correct
   * when two overlap (each removed row is returned to one of them), they only do the work twice.
   */
  async withSweepLock<T>(name: string, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    if (this.closed) throw new StoreClosedError();
    const key = advisoryKey(`wmp-relay:sweep:${name}`);
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw unavailable(error) ?? error;
    }
    let locked: boolean;
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
      locked = rows[0]!.locked;
    } catch (error) {
      client.release(true);
      throw unavailable(error) ?? error;
    }
    if (!locked) {
      client.release();
      return { ran: false };
    }
    try {
      return { ran: true, value: await fn() };
    } finally {
      try {
        await client.query('SELECT pg_advisory_unlock($1)', [key]);
        client.release();
      } catch {
        // Not given back to the pool: closing the connection is what drops the lock then.
        client.release(true);
      }
    }
  }

  /** Commits what is queued, then closes the writer and the pool; every later call is refused. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.writer.close();
      await this.#pool.end().catch(() => undefined);
    })();
    return this.#closing;
  }
}

function clientConfig(options: PostgresDatabaseOptions): pg.ClientConfig {
  if (typeof options?.url !== 'string' || options.url.length === 0) throw new StoreInputError('database URL required');
  try {
    // node-postgres reads the URL lazily; parse it here so a bad one fails now, as an input error.
    new pg.Client({ connectionString: options.url });
  } catch (error) {
    throw Object.assign(new StoreInputError('database URL not understood'), { cause: error });
  }
  const connectTimeout = options.connectTimeoutMs ?? 5000;
  const statementTimeout = options.statementTimeoutMs ?? 30_000;
  return {
    connectionString: options.url,
    connectionTimeoutMillis: connectTimeout,
    statement_timeout: statementTimeout,
    application_name: options.applicationName ?? 'wmp-relay',
    types,
  };
}

async function withClient<T>(config: pg.ClientConfig, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(config);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw unavailable(error) ?? new StoreUnavailableError('unreachable', error);
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Applies the migrations this database lacks, each in its own transaction, under a session-level
 * advisory lock: a node starting while another migrates waits, then finds nothing to do. A
 * database migrated by a newer relay is refused (StoreSchemaError), never written.
 */
export async function migrate(client: pg.Client): Promise<number> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS wmp_schema_version (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM wmp_schema_version',
    );
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new StoreSchemaError(`database schema version ${current} is newer than this relay's (${SCHEMA_VERSION})`);
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO wmp_schema_version (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    return SCHEMA_VERSION;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
  }
}
