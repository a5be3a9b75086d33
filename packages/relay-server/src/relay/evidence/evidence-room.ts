import type { Keypair } from '@wmp/jcs-signing';
import type { EvidenceStore } from '../../storage/contracts/evidence-store.js';
import type { QueueStore } from '../../storage/contracts/queue-store.js';
import type { Forwarder } from '../routing/forwarder.js';
import type { Logger } from '../support/logger.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { RefusalLog } from '../support/refusals.js';
import type { ResolvedEvidenceConfig } from './evidence-config.js';
import { EvidenceIssuer } from './evidence-issuer.js';
import { EvidenceNotifier } from './evidence-notifier.js';
import { EvidenceWitness } from './evidence-witness.js';
import { PeerEvidence } from './peer-evidence.js';

export interface EvidenceRoomInput {
  readonly store: EvidenceStore;
  readonly config: ResolvedEvidenceConfig;
  readonly identity: Keypair;
  readonly origin: () => string;
  readonly queue: Pick<QueueStore, 'append' | 'stats'>;
  readonly forwarder: Pick<Forwarder, 'offer'>;
  readonly ttlMs: number;
  readonly maxQueued: number;
  readonly metrics: RelayMetrics;
  readonly refusals: RefusalLog;
  readonly logger: Logger;
  readonly now: () => number;
}

/** A case stays open this long after its message's expiry: a peer's records of it may still come. */
const EVIDENCE_CASE_GRACE_MS = 24 * 3600 * 1000;

/** The evidence room: the issuer (sign, timestamp), the notifier (to senders and peers), the witness, peers' records. */
export function evidenceRoom(r: EvidenceRoomInput): { witness: EvidenceWitness; fromPeers: PeerEvidence } {
  const issuer = new EvidenceIssuer({
    identity: r.identity,
    retention: r.config.retention,
    tsa: r.config.tsa?.client,
    logger: r.logger,
    tsaFailed: () => {
      r.metrics.tsaFailures++;
    },
  });
  const notifier = new EvidenceNotifier({
    queue: r.queue,
    forwarder: r.forwarder,
    relayId: r.identity.did,
    ttlMs: r.ttlMs,
    maxQueued: r.maxQueued,
    refusals: r.refusals,
    logger: r.logger,
    now: r.now,
  });
  const witness = new EvidenceWitness({
    store: r.store,
    issuer,
    notifier,
    origin: r.origin,
    caseGraceMs: EVIDENCE_CASE_GRACE_MS,
    metrics: r.metrics,
    refusals: r.refusals,
    logger: r.logger,
    now: r.now,
  });
  const fromPeers = new PeerEvidence({
    store: r.store,
    issuer,
    notifier,
    retention: r.config.retention,
    refusals: r.refusals,
    logger: r.logger,
    now: r.now,
  });
  return { witness, fromPeers };
}
