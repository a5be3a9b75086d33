import { StoreInputError } from '../errors.js';
import type { Totals } from './totals.js';

/** One verified MLS key package as the relay keeps it (`ohan.mls.keypackage.publish`). */
export interface KeyPackageInput {
  /** The KeyPackageRef (RFC 9420 §5.2), base64url: unique across the store. */
  readonly ref: string;
  /** The MLSMessage (`mls_key_package`), base64url, exactly as published. */
  readonly keyPackage: string;
  readonly cipherSuite: number;
  /** When it stops being handed out (ms since the epoch): the end of its lifetime, or sooner. */
  readonly expiresAt: number;
}

/** A stored key package, with the identity it was published for. */
export interface StoredKeyPackage extends KeyPackageInput {
  readonly identity: string;
}

export interface PublishOptions {
  readonly now: number;
  /** Unexpired key packages one identity may hold; what does not fit is not added. */
  readonly maxPerIdentity: number;
}

/** Capacity of the whole store (per-identity caps are the caller's policy, passed per call). */
export interface KeyPackageLimits {
  /** Key packages held in total. */
  readonly maxTotal: number;
  /** Bytes (UTF-8 length of the key package text) held in total. */
  readonly maxBytes: number;
}

export const DEFAULT_KEY_PACKAGE_LIMITS: KeyPackageLimits = Object.freeze({
  maxTotal: 100_000,
  maxBytes: 64 * 1024 * 1024,
});

/** Largest key package text a store accepts (the publish schema's own cap). */
export const MAX_KEY_PACKAGE_BYTES = 16 * 1024;

/**
 * The relay's MLS key packages (docs/architecture.md, "Group sessions"), async so a distributed
 * adapter fits. Each is handed out once (`take` removes it), oldest first; expired ones are never
 * handed out and leave with `sweepExpired`. Verification (signature, credential bound to the
 * publisher) is the caller's: a store keeps what it is given.
 */
export interface KeyPackageStore {
  readonly limits: KeyPackageLimits;
  /**
   * Adds `packages` for `identity` in order, as many as fit under `maxPerIdentity` (counting
   * the identity's unexpired ones) and the store's limits; a ref already stored is skipped (a
   * retry). Resolves, once durable, with how many were added. At most 100 per call.
   */
  publish(identity: string, packages: readonly KeyPackageInput[], options: PublishOptions): Promise<number>;
  /** Removes and returns the oldest unexpired key package of `identity` (of `cipherSuite` if given). */
  take(identity: string, cipherSuite: number | undefined, now: number): Promise<StoredKeyPackage | undefined>;
  /**
   * Keeps `keyPackage` as the identity's last-resort key package (RFC 9420 §16.8 allows reusing
   * one such package), replacing the previous one: it is never taken, so others can always add
   * the identity to a group, however many of its packages were drained. Counted in the totals;
   * refused (false) past the store's caps.
   */
  putLastResort(identity: string, keyPackage: KeyPackageInput, now: number): Promise<boolean>;
  /** The identity's unexpired last-resort key package (of `cipherSuite` if given), left in place. */
  lastResort(identity: string, cipherSuite: number | undefined, now: number): Promise<StoredKeyPackage | undefined>;
  /** Unexpired key packages of `identity`. */
  count(identity: string, now: number): Promise<number>;
  /** Removes at most `batch` (<= 1000) expired key packages (last-resort ones too); returns how many. */
  sweepExpired(now: number, batch: number): Promise<number>;
  /** Count and bytes held, O(1). */
  totals(): Promise<Totals>;
}

/** Most key packages one publish may carry (the envelope's `MAX_KEY_PACKAGES_PER_PUBLISH`). */
export const MAX_KEY_PACKAGES_PER_CALL = 100;

/** Refuses input no adapter should store: what the relay passes is already checked. */
export function checkKeyPackageInput(
  identity: string,
  packages: readonly KeyPackageInput[],
  options: PublishOptions,
): void {
  if (typeof identity !== 'string' || identity.length === 0) throw new StoreInputError('identity required');
  if (!Array.isArray(packages) || packages.length > MAX_KEY_PACKAGES_PER_CALL) {
    throw new StoreInputError(`at most ${MAX_KEY_PACKAGES_PER_CALL} key packages per call`);
  }
  if (!Number.isSafeInteger(options.maxPerIdentity) || options.maxPerIdentity < 1) {
    throw new StoreInputError('maxPerIdentity must be a positive integer');
  }
  for (const p of packages) {
    if (
      typeof p?.ref !== 'string' ||
      p.ref.length === 0 ||
      p.ref.length > 256 ||
      typeof p.keyPackage !== 'string' ||
      p.keyPackage.length === 0 ||
      p.keyPackage.length > MAX_KEY_PACKAGE_BYTES ||
      !Number.isSafeInteger(p.cipherSuite) ||
      !Number.isFinite(p.expiresAt)
    ) {
      throw new StoreInputError('not a key package record');
    }
  }
}

/** Capacity limits must be positive integers (refused at construction). */
export function checkKeyPackageLimits(limits: KeyPackageLimits): KeyPackageLimits {
  for (const [k, v] of Object.entries(limits)) {
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`keyPackages.${k} must be a positive integer`);
  }
  return Object.freeze({ ...limits });
}
