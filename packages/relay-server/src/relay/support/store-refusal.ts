import { RateLimitedError, type WmpError } from '@wmp/jsonrpc-envelope';
import { isStoreUnavailable } from '../../storage/errors.js';
import type { RefusalLog } from './refusals.js';

/** The retry hint of a store that is down: about how long a database restart or failover takes. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * The answer while the database is down (PostgreSQL unreachable, a lost connection): -31007 with
 * `data.reason: "store_unavailable"` and `retry_after` in seconds, so that a client tells "try
 * again shortly" from a bug (-32603). Nothing was stored: a retry is safe (message ids are
 * idempotent).
 */
export class StoreUnavailableRefusal extends RateLimitedError {
  constructor() {
    super({ reason: 'store_unavailable', retry_after: STORE_RETRY_AFTER_SECONDS });
    this.name = 'StoreUnavailableRefusal';
  }
}

/** The relay's typed answer to a handler's failure, when it has one (`WmpServerOptions.refusalOf`). */
export function storeRefusalOf(refusals: RefusalLog): (error: unknown) => WmpError | undefined {
  return (error) => {
    if (!isStoreUnavailable(error)) return undefined;
    refusals.note('store_unavailable');
    return new StoreUnavailableRefusal();
  };
}
