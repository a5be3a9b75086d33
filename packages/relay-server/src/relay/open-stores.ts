import type { RelayStoreLimits, RelayStores } from '../storage/contracts/relay-stores.js';
import { MemoryRelayStores } from '../storage/memory/memory-store.js';
import type { RelayConfig } from './config.js';

/**
 * The stores, with the caps of the config. A ready store enforces its own caps, so one that
 * disagrees with caps the config sets explicitly is refused rather than silently winning (pass a
 * factory to have the config's caps applied).
 */
export function openStores(input: RelayConfig, limits: RelayStoreLimits): RelayStores {
  if (typeof input.store === 'function') return input.store(limits);
  if (input.store === undefined) return new MemoryRelayStores(limits);
  const asked = input.limits ?? {};
  const { queue, sessions, evidence } = input.store;
  const differs = (wanted: number | undefined, own: number) => wanted !== undefined && wanted !== own;
  if (
    differs(asked.maxQueued, queue.limits.maxQueued) ||
    differs(asked.maxQueueBytes, queue.limits.maxBytes) ||
    differs(asked.maxQueuedPerSender, queue.limits.maxQueuedPerSender) ||
    differs(asked.maxQueueBytesPerSender, queue.limits.maxBytesPerSender) ||
    differs(asked.maxTotalQueueBytes, queue.limits.maxTotalBytes) ||
    differs(asked.maxSessions, sessions.limits.maxSessions) ||
    differs(asked.maxPendingSessions, sessions.limits.maxPendingSessions) ||
    differs(asked.maxEvidenceRecords, evidence.limits.maxRecords)
  ) {
    throw new RangeError('limits differ from the caps of the given store (pass a store factory instead)');
  }
  return input.store;
}
