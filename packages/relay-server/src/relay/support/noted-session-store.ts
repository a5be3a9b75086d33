import { type SessionStore, SessionStoreFullError } from '@wmp/session';
import type { RefusalLog } from './refusals.js';

/**
 * The relay's session store as the session engine and the relay's handlers use it: the same
 * store, with every refusal of a full store (all sessions, or the unauthenticated ones) noted in
 * the refusal log, so that it is logged once per interval (decision 0130) and counted on /metrics.
 */
export function notingFullStore(store: SessionStore, refusals: RefusalLog): SessionStore {
  const noted = <T>(operation: Promise<T>): Promise<T> =>
    operation.catch((e: unknown) => {
      if (e instanceof SessionStoreFullError) refusals.note('session_store_full');
      throw e;
    });
  return {
    get limits() {
      return store.limits;
    },
    get: (id) => store.get(id),
    create: (session) => noted(store.create(session)),
    update: (id, change) => noted(store.update(id, change)),
    delete: (id) => store.delete(id),
    sweep: (now) => store.sweep(now),
    counts: () => store.counts(),
  };
}
