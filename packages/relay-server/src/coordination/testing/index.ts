// The shared coordination suites (vitest), for authors of a coordination adapter: the memory and
// Redis adapters pass them, and so must yours. `factory` gives a fresh, empty backend per call.

import { replayCacheSuite } from './caches.suite.js';
import { presenceDirectorySuite, wakeUpsSuite } from './cluster.suite.js';
import type { CoordinationFactory } from './harness.js';
import { keyPackageBudgetsSuite, rateLimiterSuite } from './limits.suite.js';

export { Clusters, type CoordinationCluster, type CoordinationFactory, holdsFor, until } from './harness.js';
export { keyPackageBudgetsSuite, presenceDirectorySuite, rateLimiterSuite, replayCacheSuite, wakeUpsSuite };

/** Every coordination suite, on one adapter. */
export function coordinationSuite(name: string, factory: CoordinationFactory): void {
  rateLimiterSuite(name, factory);
  keyPackageBudgetsSuite(name, factory);
  replayCacheSuite(name, factory);
  presenceDirectorySuite(name, factory);
  wakeUpsSuite(name, factory);
}
