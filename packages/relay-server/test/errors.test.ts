// This package's own errors are one family: each a RelayServerError with a stable code and a fixed
// message.
import { describe, expect, it } from 'vitest';
import { expectErrorFamily } from '../../../test-support/error-family.js';
import { RedisDeadlineError, RedisFailure } from '../src/coordination/redis/link.js';
import {
  BoxApiError,
  CoordinationUnavailableError,
  MemoryBoxStore,
  RelayServerError,
  RelayStoreError,
  StoreClosedError,
} from '../src/index.js';
import { FederationFetchError } from '../src/relay/federation/bounded-fetch.js';
import { BoxFastPathError } from '../src/storage/postgres/postgres-box-writer.js';

describe('the relay-server errors', () => {
  it('all extend RelayServerError, each with its stable code and a fixed message', () => {
    const cause = new Error('ECONNREFUSED 10.0.0.7:6379');
    expectErrorFamily(RelayServerError, [
      [new BoxApiError('unavailable'), 'unavailable', 'temporarily unavailable'],
      [new CoordinationUnavailableError({ cause }), 'ERR_COORDINATION_UNAVAILABLE', 'coordination unavailable'],
      [new StoreClosedError(), 'ERR_STORE_CLOSED', 'store is closed'],
      [new RedisFailure('full', cause), 'ERR_REDIS_FULL', 'redis full'],
      [new RedisDeadlineError(), 'ERR_REDIS_DEADLINE', 'redis did not answer in time'],
      [new BoxFastPathError(cause), 'ERR_BOX_FAST_PATH', 'box fast path failed'],
      [new FederationFetchError('status'), 'status', 'the server did not answer 200'],
      [new FederationFetchError('too_large'), 'too_large', 'the document is too large'],
    ]);
    expect(new StoreClosedError()).toBeInstanceOf(RelayStoreError);
  });

  it('are what the package throws: a closed store refuses with one', async () => {
    const store = new MemoryBoxStore();
    await store.close();
    await expect(store.fetch('z6MkAlice', 0, 10)).rejects.toThrow(RelayServerError);
  });
});
