import {
  MlsError,
  NotAuthorizedError,
  type ParamsOf,
  ParticipantNotFoundError,
  RateLimitedError,
} from '@wmp/jsonrpc-envelope';
import { isSupportedCipherSuite, MlsBridgeError, verifyKeyPackage } from '@wmp/mls-bridge';
import type { Connection } from '@wmp/session';
import type { KeyPackageBudgets } from '../../coordination/contracts/key-package-budgets.js';
import type { KeyPackageInput, KeyPackageStore, StoredKeyPackage } from '../../storage/contracts/key-package-store.js';
import type { RelayLimits, RelayTimings } from '../support/limits.js';
import type { RefusalLog } from '../support/refusals.js';
import type { RelayLimiters } from '../support/relay-limiters.js';

/** What publishing and taking key packages use: their store, the budgets they are handed out within. */
export interface KeyPackageDeps {
  readonly keyPackages: KeyPackageStore;
  /** How many key packages others may take of one identity (shared by the nodes of a cluster). */
  readonly keyPackageBudget: KeyPackageBudgets;
  readonly limits: Pick<RelayLimits, 'maxKeyPackagesPerIdentity' | 'maxKeyPackagesPerPublish'>;
  readonly timings: Pick<RelayTimings, 'keyPackageTtlSeconds'>;
  readonly limiters: Pick<RelayLimiters, 'chargeRequests'>;
  readonly refusals: RefusalLog;
  now(): number;
}

type Published = ParamsOf<'ohan.mls.keypackage.publish'>['key_packages'][number];

/**
 * Checks one published key package (docs/architecture.md, "Group sessions") without a group: a
 * suite we know, both signatures, its lifetime, and a basic credential whose DID names the leaf's
 * signature key (mls-bridge `verifyKeyPackage`), and that DID must be the publisher's own identity.
 * A bad one is -31004 with mls-bridge's `data.reason`; someone else's is -31002. `data.index` says
 * which.
 */
async function verified(
  s: KeyPackageDeps,
  identity: string,
  entry: Published,
  index: number,
): Promise<KeyPackageInput> {
  const now = s.now();
  if (!isSupportedCipherSuite(entry.cipher_suite)) throw new MlsError({ reason: 'unsupported_cipher_suite', index });
  let info: Awaited<ReturnType<typeof verifyKeyPackage>>;
  try {
    info = await verifyKeyPackage(entry.key_package, { cipherSuite: entry.cipher_suite, now });
  } catch (e) {
    if (e instanceof MlsBridgeError) throw new MlsError({ reason: e.reason, index });
    throw e;
  }
  if (info.identity !== identity) throw new NotAuthorizedError({ reason: 'key package of another identity', index });
  // Handed out until the earliest of: its own lifetime, the publisher's `expires`, the relay's cap.
  const ends = [Date.parse(info.expires), now + s.timings.keyPackageTtlSeconds * 1000];
  if (entry.expires !== undefined) ends.push(Date.parse(entry.expires));
  return {
    ref: info.ref,
    keyPackage: entry.key_package,
    cipherSuite: info.cipherSuite,
    expiresAt: Math.min(...ends.filter(Number.isFinite)),
  };
}

/**
 * `ohan.mls.keypackage.publish` for the caller's own identity. Cheap refusals first
 * (docs/architecture.md, "Bounds"): only what fits under `maxKeyPackagesPerIdentity`, and at most
 * `maxKeyPackagesPerPublish` of it, is considered, and the caller's request budget is charged one
 * request per package before any is verified (two signature checks each). One bad package refuses
 * the call and stores nothing. A package marked `last_resort` becomes the identity's last-resort
 * one (never taken, replacing the previous). `accepted` says how many were added (a retry of a
 * stored one adds nothing).
 */
export async function publishKeyPackages(
  s: KeyPackageDeps,
  identity: string,
  entries: readonly Published[],
  connection: Connection,
): Promise<number> {
  const now = s.now();
  const { maxKeyPackagesPerIdentity: maxPerIdentity, maxKeyPackagesPerPublish } = s.limits;
  const lastResort = entries.findLast((e) => e.last_resort === true);
  const regular = entries.filter((e) => e.last_resort !== true);
  const room = Math.max(0, maxPerIdentity - (await s.keyPackages.count(identity, now)));
  const considered = regular.slice(0, Math.min(room, maxKeyPackagesPerPublish - (lastResort ? 1 : 0)));
  const work = considered.length + (lastResort ? 1 : 0);
  if (work === 0) return 0;
  // The call itself was charged one request already.
  if (work > 1) await s.limiters.chargeRequests(identity, connection, s.refusals, work - 1);
  const inputs: KeyPackageInput[] = [];
  for (const entry of considered) inputs.push(await verified(s, identity, entry, entries.indexOf(entry)));
  const last = lastResort ? await verified(s, identity, lastResort, entries.indexOf(lastResort)) : undefined;
  const added = inputs.length > 0 ? await s.keyPackages.publish(identity, inputs, { now, maxPerIdentity }) : 0;
  const keptLast = last !== undefined && (await s.keyPackages.putLastResort(identity, last, now));
  return added + (keptLast ? 1 : 0);
}

/**
 * `ohan.mls.keypackage.fetch` by `caller`: hands out (and removes) the oldest one of `identity`.
 * Of another identity only within the target's budget (all callers together); beyond it, or when
 * none is left, the identity's last-resort package is handed out and kept (so nobody can stop
 * others from adding it to a group by draining its packages); without one: -31007 over the budget
 * (nothing taken), -31008 when there is none. A miss takes nothing and is given back to the budget.
 */
export async function takeKeyPackage(
  s: KeyPackageDeps,
  caller: string,
  params: ParamsOf<'ohan.mls.keypackage.fetch'>,
): Promise<{ identity: string; key_package: string; cipher_suite: number }> {
  const now = s.now();
  // Reserved atomically across callers and nodes; a miss gives it back (a miss costs nothing).
  const refund = await s.keyPackageBudget.reserve(caller, params.identity);
  let taken: StoredKeyPackage | undefined;
  if (refund !== undefined) {
    try {
      taken = await s.keyPackages.take(params.identity, params.cipher_suite, now);
    } catch (e) {
      await refund();
      throw e;
    }
    if (taken === undefined) await refund();
  }
  taken ??= await s.keyPackages.lastResort(params.identity, params.cipher_suite, now);
  if (taken === undefined) {
    if (refund === undefined) {
      s.refusals.note('key_package_budget');
      throw new RateLimitedError({ reason: 'key package budget' });
    }
    throw new ParticipantNotFoundError({ reason: 'no key package for this identity' });
  }
  return { identity: taken.identity, key_package: taken.keyPackage, cipher_suite: taken.cipherSuite };
}
