// The browser-safe parts of the OHAN box HTTP API. The app itself (`createBoxApp`) uses the SSE
// writer of `@wmp/transports/node`, so it is exported from `@wmp/relay-server/node`.
export { BOX_ERROR_STATUS, BoxApiError, type BoxErrorCode } from './errors.js';
export {
  BOX_API_PREFIX,
  BOX_PROTOCOL,
  type BoxAppOptions,
  DEFAULT_RATE_LIMIT,
  type RateLimitOptions,
  SOURCE_RATE_FACTOR,
  sourceRateOf,
} from './options.js';
export { DEFAULT_FETCH_LIMIT, MAX_FETCH_LIMIT } from './query.js';
export {
  type BoxSweeper,
  type SweepOptions,
  startBoxSweeper,
  sweepExpiredCards,
  sweepExpiredEvents,
} from './sweeper.js';
