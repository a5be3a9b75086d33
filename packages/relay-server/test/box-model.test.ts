// The memory and SQLite boxes against the reference model of docs/ohan-profile.md's lanes and caps
// (fixtures/box-model.ts); box-model-postgres.test.ts runs the PostgreSQL box against it.
import { describe, expect, it } from 'vitest';
import { againstModel, EVERY_REFUSAL, memoryBox, sqliteBox } from './fixtures/box-model.js';

describe('the box against a reference model of its rules', () => {
  it('memory and SQLite answer and store exactly what the model does', async () => {
    const tally = await againstModel({ memory: memoryBox, sqlite: sqliteBox }, 120);
    // The generator reaches every rule: each refusal, evictions and idempotent retries.
    expect([...tally.refused].sort()).toEqual(EVERY_REFUSAL);
    expect(tally.evicted).toBeGreaterThan(50);
    expect(tally.exists).toBeGreaterThan(20);
    // 120 generated runs: about 12 s alone, several times that beside a busy suite.
  }, 120_000);
});
