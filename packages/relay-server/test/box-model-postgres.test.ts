// The PostgreSQL box against the reference model of docs/ohan-profile.md's lanes and caps
// (fixtures/box-model.ts; box-model.test.ts runs the memory and SQLite boxes against it).
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresBoxStore } from '../src/storage/postgres/postgres-box-store.js';
import { againstModel, EVERY_REFUSAL, type OpenBox, SENDER_LIMIT } from './fixtures/box-model.js';
import { PostgresBoxes } from './fixtures/postgres-box.js';

/** Runs of the property on PostgreSQL (memory and SQLite: 120). */
const PG_RUNS = 40;

/** The PostgreSQL boxes: one schema for the whole property, emptied before each run. */
const postgres = new PostgresBoxes('box_model');
let pgPool: Promise<pg.Pool> | undefined;
afterAll(async () => {
  if (pgPool) await (await pgPool).end();
});

const postgresBox: OpenBox = async (limits) => {
  pgPool ??= postgres.schema().then((schema) => postgres.pool(schema));
  const pool = await pgPool;
  await pool.query(`DELETE FROM ohan_events; DELETE FROM ohan_recipients; DELETE FROM ohan_senders;
    DELETE FROM ohan_pairs; DELETE FROM ohan_allow; DELETE FROM ohan_cards;
    UPDATE ohan_box_totals SET count = 0, bytes = 0; UPDATE ohan_card_totals SET count = 0`);
  const box = new PostgresBoxStore(pool, limits);
  return { box, close: () => box.close() };
};

describe('the box against a reference model of its rules', () => {
  // Fewer runs: each step is a few round trips to the server, and observing the state after it
  // another 16 queries (about 2 s per 10 runs here, against 0.5 s for memory and SQLite
  // together), plus one fixed sequence, as few runs would often miss sender_limit.
  it('PostgreSQL answers and stores exactly what the model does', async () => {
    const tally = await againstModel({ postgres: postgresBox }, PG_RUNS, [SENDER_LIMIT]);
    expect([...tally.refused].sort()).toEqual(EVERY_REFUSAL);
    expect(tally.evicted).toBeGreaterThan(15);
    expect(tally.exists).toBeGreaterThan(6);
  }, 120_000);
});
