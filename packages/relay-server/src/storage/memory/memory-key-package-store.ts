import {
  checkKeyPackageInput,
  checkKeyPackageLimits,
  DEFAULT_KEY_PACKAGE_LIMITS,
  type KeyPackageInput,
  type KeyPackageLimits,
  type KeyPackageStore,
  type PublishOptions,
  type StoredKeyPackage,
} from '../contracts/key-package-store.js';
import { clampCount, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { StoreClosedError } from '../errors.js';

/**
 * Key packages in memory, for tests and `--ephemeral` relays: the behaviour of the SQLite
 * adapter (one shared suite), nothing survives the process.
 */
export class MemoryKeyPackageStore implements KeyPackageStore {
  readonly limits: KeyPackageLimits;
  /** Identity -> its key packages in publish order (oldest first). */
  readonly #byIdentity = new Map<string, StoredKeyPackage[]>();
  readonly #refs = new Set<string>();
  readonly #lastResort = new Map<string, StoredKeyPackage>();
  #totals = { ...EMPTY_TOTALS };
  #closed = false;

  constructor(limits: Partial<KeyPackageLimits> = {}) {
    this.limits = checkKeyPackageLimits({ ...DEFAULT_KEY_PACKAGE_LIMITS, ...limits });
  }

  async publish(identity: string, packages: readonly KeyPackageInput[], options: PublishOptions): Promise<number> {
    this.#open();
    checkKeyPackageInput(identity, packages, options);
    const list = this.#byIdentity.get(identity) ?? [];
    // The identity's expired ones go first: they would only hold its cap and the store's bytes.
    for (let i = list.length - 1; i >= 0; i--) {
      const old = list[i]!;
      if (old.expiresAt <= options.now) {
        list.splice(i, 1);
        this.#forget(identity, list, old);
      }
    }
    let live = list.length;
    let added = 0;
    for (const p of packages) {
      if (this.#refs.has(p.ref) || p.expiresAt <= options.now) continue;
      if (live >= options.maxPerIdentity) break;
      const bytes = p.keyPackage.length;
      if (this.#totals.count >= this.limits.maxTotal || this.#totals.bytes + bytes > this.limits.maxBytes) break;
      list.push({ identity, ref: p.ref, keyPackage: p.keyPackage, cipherSuite: p.cipherSuite, expiresAt: p.expiresAt });
      this.#refs.add(p.ref);
      this.#account(1, bytes);
      live++;
      added++;
    }
    if (list.length > 0) this.#byIdentity.set(identity, list);
    return added;
  }

  async take(identity: string, cipherSuite: number | undefined, now: number): Promise<StoredKeyPackage | undefined> {
    this.#open();
    const list = this.#byIdentity.get(identity);
    const at = list?.findIndex(
      (p) => p.expiresAt > now && (cipherSuite === undefined || p.cipherSuite === cipherSuite),
    );
    if (list === undefined || at === undefined || at < 0) return undefined;
    const [taken] = list.splice(at, 1);
    this.#forget(identity, list, taken!);
    return { ...taken! };
  }

  async putLastResort(identity: string, keyPackage: KeyPackageInput, now: number): Promise<boolean> {
    this.#open();
    checkKeyPackageInput(identity, [keyPackage], { now, maxPerIdentity: 1 });
    if (keyPackage.expiresAt <= now) return false;
    const old = this.#lastResort.get(identity);
    const bytes = keyPackage.keyPackage.length - (old?.keyPackage.length ?? 0);
    const count = old === undefined ? 1 : 0;
    if (this.#totals.count + count > this.limits.maxTotal || this.#totals.bytes + bytes > this.limits.maxBytes) {
      return false;
    }
    this.#lastResort.set(identity, {
      identity,
      ref: keyPackage.ref,
      keyPackage: keyPackage.keyPackage,
      cipherSuite: keyPackage.cipherSuite,
      expiresAt: keyPackage.expiresAt,
    });
    this.#account(count, bytes);
    return true;
  }

  async lastResort(
    identity: string,
    cipherSuite: number | undefined,
    now: number,
  ): Promise<StoredKeyPackage | undefined> {
    this.#open();
    const p = this.#lastResort.get(identity);
    if (p === undefined || p.expiresAt <= now || (cipherSuite !== undefined && p.cipherSuite !== cipherSuite)) {
      return undefined;
    }
    return { ...p };
  }

  async count(identity: string, now: number): Promise<number> {
    this.#open();
    return (this.#byIdentity.get(identity) ?? []).filter((p) => p.expiresAt > now).length;
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    let left = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    let removed = 0;
    for (const [identity, list] of [...this.#byIdentity]) {
      for (let i = 0; i < list.length && left > 0; ) {
        const p = list[i]!;
        if (p.expiresAt > now) {
          i++;
          continue;
        }
        list.splice(i, 1);
        this.#forget(identity, list, p);
        left--;
        removed++;
      }
      if (left === 0) break;
    }
    for (const [identity, p] of this.#lastResort) {
      if (left === 0) break;
      if (p.expiresAt > now) continue;
      this.#lastResort.delete(identity);
      this.#account(-1, -p.keyPackage.length);
      left--;
      removed++;
    }
    return removed;
  }

  async totals(): Promise<Totals> {
    this.#open();
    return { ...this.#totals };
  }

  close(): void {
    this.#closed = true;
  }

  #forget(identity: string, list: StoredKeyPackage[], p: StoredKeyPackage): void {
    this.#refs.delete(p.ref);
    this.#account(-1, -p.keyPackage.length);
    if (list.length === 0 && this.#byIdentity.get(identity) === list) this.#byIdentity.delete(identity);
  }

  #account(count: number, bytes: number): void {
    this.#totals = { count: this.#totals.count + count, bytes: this.#totals.bytes + bytes };
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError();
  }
}
