import type { RelayHop } from '@wmp/jcs-signing';
import type { Connection, SessionStore } from '@wmp/session';
import type { ByteBudget } from '@wmp/transports';
import type { KeyPackageBudgets } from '../coordination/contracts/key-package-budgets.js';
import type { KeyPackageStore } from '../storage/contracts/key-package-store.js';
import type { MlsGroupStore } from '../storage/contracts/mls-group-store.js';
import type { QueueLimits, QueueStore } from '../storage/contracts/queue-store.js';
import type { ResolvedConfig } from './support/limits.js';
import type { Federation } from './federation/federation.js';
import type { Forwarder } from './routing/forwarder.js';
import type { Logger } from './support/logger.js';
import type { RelayMetrics } from './support/metrics.js';
import type { Presence } from './presence/presence.js';
import type { RefusalLog } from './support/refusals.js';
import type { RelayLimiters } from './support/relay-limiters.js';
import type { StatusNotifier } from './statuses/statuses.js';

/** The connections bound to a session (the session engine knows them). */
export interface GroupConnections {
  connectionsOf(sessionId: string): Connection[];
}

/** Memory shared by every connection of the relay (DESIGN §7: bound the totals). */
export interface RelayBudgets {
  /** Bytes sent to slow readers and not yet written (WebSocket buffers, SSE queues). */
  readonly outbound: ByteBudget;
  /** Characters kept for SSE replay. */
  readonly replay: ByteBudget;
  /** Request body bytes being read. */
  readonly bodies: ByteBudget;
}

/** What the relay's handlers share: one object, built once by `createRelayCore`. */
export interface RelayServices {
  readonly config: ResolvedConfig;
  readonly queue: QueueStore;
  /** The limits the queue store enforces (the config's, or a ready store's own). */
  readonly queueLimits: QueueLimits;
  readonly sessions: SessionStore;
  readonly keyPackages: KeyPackageStore;
  /** How many key packages others may take of one identity (shared by the nodes of a cluster). */
  readonly keyPackageBudget: KeyPackageBudgets;
  readonly groups: MlsGroupStore;
  readonly presence: Presence;
  readonly forwarder: Forwarder;
  readonly statuses: StatusNotifier;
  /** Relay-to-relay routing, when federation is on. */
  readonly federation: Federation | undefined;
  /** The connections bound to each session (from the session engine). */
  readonly connections: GroupConnections;
  /** Session opens and routed bytes, per identity, connection and source. */
  readonly limiters: RelayLimiters;
  readonly refusals: RefusalLog;
  readonly metrics: RelayMetrics;
  readonly logger: Logger;
  /** This relay as a hop of relay_chain (its URL is known once it listens). */
  hop(): RelayHop;
  now(): number;
}

// Defined beside the status notifier it also serves; re-exported for the method handlers.
export { metaFor } from './support/session-meta.js';
