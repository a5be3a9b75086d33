// Throwaway PostgreSQL and Redis servers for the tests of any package (see README.md here).
//   import { startPostgres, startRedis } from '../../../test-support/services/index.js';
export { freePort, isProcessAlive, ServiceBinaryMissingError, type ServiceName, ServiceStartError } from './common.js';
export {
  createDatabase,
  type PostgresOptions,
  type PostgresServer,
  type PostgresStopMode,
  postgresBinDir,
  startPostgres,
} from './postgres.js';
export { pingRedis, type RedisOptions, type RedisServer, redisBinary, startRedis } from './redis.js';
