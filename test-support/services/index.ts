// Throwaway PostgreSQL and Redis servers for the tests of any package (see README.md here).
//   import { startPostgres, startRedis } from '../../../test-support/services/index.js';
export { freePort, isProcessAlive, ServiceBinaryMissingError, type ServiceName, ServiceStartError } from './common.js';
export { type PostgresOptions, type PostgresServer, type PostgresStopMode, startPostgres } from './postgres.js';
export { postgresBinDir } from './postgres-binaries.js';
export { createDatabase } from './postgres-database.js';
export { pingRedis, type RedisOptions, type RedisServer, redisBinary, startRedis } from './redis.js';
