import type { RelayHop } from '@wmp/jcs-signing';
import type { SessionStore } from '@wmp/session';
import type { KeyPackageStore } from '../storage/contracts/key-package-store.js';
import type { MlsGroupStore } from '../storage/contracts/mls-group-store.js';
import type { QueueLimits, QueueStore } from '../storage/contracts/queue-store.js';
import type { ResolvedConfig } from './config.js';
import type { Forwarder } from './forwarder.js';
import type { KeyPackageBudget } from './key-package-budget.js';
import type { Logger } from './logger.js';
import type { RelayMetrics } from './metrics.js';
import type { Presence } from './presence.js';
import type { GroupConnections } from './route.js';
import type { StatusNotifier } from './statuses.js';

/** What the relay's handlers share: one object, built once by `createRelayCore`. */
export interface RelayServices {
  readonly config: ResolvedConfig;
  readonly queue: QueueStore;
  /** The limits the queue store enforces (the config's, or a ready store's own). */
  readonly queueLimits: QueueLimits;
  readonly sessions: SessionStore;
  readonly keyPackages: KeyPackageStore;
  /** How many key packages one caller may take of another identity (memory only). */
  readonly keyPackageBudget: KeyPackageBudget;
  readonly groups: MlsGroupStore;
  readonly presence: Presence;
  readonly forwarder: Forwarder;
  readonly statuses: StatusNotifier;
  /** The connections bound to each session (from the session engine). */
  readonly connections: GroupConnections;
  readonly metrics: RelayMetrics;
  readonly logger: Logger;
  /** This relay as a hop of relay_chain (its URL is known once it listens). */
  hop(): RelayHop;
  now(): number;
}

/** `wmp` of what the relay sends on a session. */
export function metaFor(sessionId: string, version = '0.1'): { version: string; session_id: string } {
  return { version, session_id: sessionId };
}

export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
