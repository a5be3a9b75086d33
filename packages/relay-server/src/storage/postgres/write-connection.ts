import type pg from 'pg';

/** The writer's connection settings (see `PostgresDatabaseOptions`). */
export interface WriterConnectionOptions {
  readonly connect: () => Promise<pg.Client>;
  readonly pipeline: boolean;
}

/** A pg Client used one transaction at a time; without pipeline mode, queries are chained here. */
export class Connection {
  readonly client: pg.Client;
  readonly pipeline: boolean;
  broken = false;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(client: pg.Client, pipeline: boolean) {
    this.client = client;
    this.pipeline = pipeline;
    client.on('error', () => {
      this.broken = true;
    });
    client.on('end', () => {
      this.broken = true;
    });
  }

  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    if (this.pipeline) return this.client.query<R>(config);
    // One query on the wire at a time (pg warns when queries queue up in a non-pipelined client).
    const result = this.#tail.then(() => this.client.query<R>(config));
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  end(): Promise<void> {
    this.broken = true;
    return this.client.end().catch(() => undefined);
  }
}
