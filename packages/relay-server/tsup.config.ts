import { defineConfig } from 'tsup';

// Entries: browser-safe interfaces and memory adapters (`.`), the Node relay (`./node`), the
// SQLite adapters (`./sqlite`, better-sqlite3 as an optional peer), the PostgreSQL adapters
// (`./postgres`, pg as an optional peer), the Redis coordination (`./redis`, @redis/client as an
// optional peer) and the shared suites (`./testing`).
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    node: 'src/node.ts',
    redis: 'src/redis.ts',
    postgres: 'src/postgres.ts',
    sqlite: 'src/sqlite.ts',
    testing: 'src/testing.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
