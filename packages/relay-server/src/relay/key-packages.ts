/** One MLS key package as published (`ohan.mls.keypackage.publish`). */
export interface KeyPackageEntry {
  readonly key_package: string;
  readonly cipher_suite: number;
  readonly expires?: string | undefined;
}

/** Identities with key packages kept at once; a new identity beyond it is refused. */
const MAX_IDENTITIES = 100_000;

/**
 * Key packages per identity, in memory (DESIGN §3): up to `maxPerIdentity` each, handed out
 * once (a key package must not be used twice), oldest first. Nothing survives a restart: owners
 * publish again when they reconnect. A persistent adapter can replace this class later.
 */
export class KeyPackageStore {
  readonly #byIdentity = new Map<string, KeyPackageEntry[]>();
  readonly #maxPerIdentity: number;
  readonly #now: () => number;

  constructor(maxPerIdentity: number, now: () => number) {
    this.#maxPerIdentity = maxPerIdentity;
    this.#now = now;
  }

  /** Adds what fits under the cap (expired ones are skipped); returns how many were kept. */
  publish(identity: string, entries: readonly KeyPackageEntry[]): number {
    let list = this.#byIdentity.get(identity);
    if (list === undefined) {
      if (this.#byIdentity.size >= MAX_IDENTITIES) return 0;
      list = [];
      this.#byIdentity.set(identity, list);
    }
    this.#dropExpired(list);
    let accepted = 0;
    for (const e of entries) {
      if (list.length >= this.#maxPerIdentity) break;
      if (this.#expired(e)) continue;
      list.push({
        key_package: e.key_package,
        cipher_suite: e.cipher_suite,
        ...(e.expires === undefined ? {} : { expires: e.expires }),
      });
      accepted++;
    }
    if (list.length === 0) this.#byIdentity.delete(identity);
    return accepted;
  }

  /** Takes (removes) the oldest unexpired key package of `identity`, of `cipherSuite` if given. */
  take(identity: string, cipherSuite?: number): KeyPackageEntry | undefined {
    const list = this.#byIdentity.get(identity);
    if (list === undefined) return undefined;
    this.#dropExpired(list);
    const at = list.findIndex((e) => cipherSuite === undefined || e.cipher_suite === cipherSuite);
    const [taken] = at < 0 ? [] : list.splice(at, 1);
    if (list.length === 0) this.#byIdentity.delete(identity);
    return taken;
  }

  count(identity: string): number {
    return this.#byIdentity.get(identity)?.length ?? 0;
  }

  #expired(e: KeyPackageEntry): boolean {
    return e.expires !== undefined && Date.parse(e.expires) <= this.#now();
  }

  #dropExpired(list: KeyPackageEntry[]): void {
    for (let i = list.length - 1; i >= 0; i--) if (this.#expired(list[i]!)) list.splice(i, 1);
  }
}
