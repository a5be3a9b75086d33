import { MlsError, NotAuthorizedError, type ParamsOf, ParticipantNotFoundError } from '@wmp/jsonrpc-envelope';
import { isSupportedCipherSuite, MlsBridgeError, verifyKeyPackage } from '@wmp/mls-bridge';
import type { KeyPackageInput, StoredKeyPackage } from '../storage/contracts/key-package-store.js';
import type { RelayServices } from './services.js';

type Published = ParamsOf<'ohan.mls.keypackage.publish'>['key_packages'][number];

/**
 * Checks one published key package (DESIGN §3) without a group: a suite we know, both
 * signatures, its lifetime, and a basic credential whose DID names the leaf's signature key
 * (mls-bridge `verifyKeyPackage`), and that DID must be the publisher's own identity. A bad one
 * is -31004 with mls-bridge's `data.reason`; someone else's is -31002. `data.index` says which.
 */
async function verified(s: RelayServices, identity: string, entry: Published, index: number): Promise<KeyPackageInput> {
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
  const ends = [Date.parse(info.expires), now + s.config.timings.keyPackageTtlSeconds * 1000];
  if (entry.expires !== undefined) ends.push(Date.parse(entry.expires));
  return {
    ref: info.ref,
    keyPackage: entry.key_package,
    cipherSuite: info.cipherSuite,
    expiresAt: Math.min(...ends.filter(Number.isFinite)),
  };
}

/**
 * `ohan.mls.keypackage.publish` for the caller's own identity: every key package that fits under
 * `maxKeyPackagesPerIdentity` is verified (one bad one refuses the call and stores nothing), then
 * stored durably; `accepted` says how many were added (a retry of a stored one adds nothing).
 */
export async function publishKeyPackages(
  s: RelayServices,
  identity: string,
  entries: readonly Published[],
): Promise<number> {
  const now = s.now();
  const maxPerIdentity = s.config.limits.maxKeyPackagesPerIdentity;
  // Only what can fit is verified: verification costs two signature checks each.
  const room = maxPerIdentity - (await s.keyPackages.count(identity, now));
  if (room <= 0) return 0;
  const inputs: KeyPackageInput[] = [];
  for (const [index, entry] of entries.slice(0, room).entries()) inputs.push(await verified(s, identity, entry, index));
  return s.keyPackages.publish(identity, inputs, { now, maxPerIdentity });
}

/**
 * `ohan.mls.keypackage.fetch` by `caller`: hands out (and removes) the oldest one of `identity`;
 * none: -31008. Of another identity only within the caller's key package budget (-31007 beyond,
 * nothing taken); a miss takes nothing and so is given back to the budget.
 */
export async function takeKeyPackage(
  s: RelayServices,
  caller: string,
  params: ParamsOf<'ohan.mls.keypackage.fetch'>,
): Promise<{ identity: string; key_package: string; cipher_suite: number }> {
  const refund = s.keyPackageBudget.reserve(caller, params.identity);
  let taken: StoredKeyPackage | undefined;
  try {
    taken = await s.keyPackages.take(params.identity, params.cipher_suite, s.now());
  } catch (e) {
    refund();
    throw e;
  }
  if (taken === undefined) {
    refund();
    throw new ParticipantNotFoundError({ reason: 'no key package for this identity' });
  }
  return { identity: taken.identity, key_package: taken.keyPackage, cipher_suite: taken.cipherSuite };
}
