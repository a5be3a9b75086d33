import { DEFAULT_EVIDENCE_LIMITS, type EvidenceLimits } from './evidence-store.js';
import { checkCap } from './limits.js';

/** Validates an evidence configuration once, at construction: a bad cap is a startup error. */
export function checkEvidenceLimits(limits: Partial<EvidenceLimits>): EvidenceLimits {
  return { maxRecords: checkCap(limits.maxRecords ?? DEFAULT_EVIDENCE_LIMITS.maxRecords, 'maxRecords') };
}
