import type BetterSqlite3 from 'better-sqlite3';
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
import type { Totals } from '../contracts/totals.js';
import { StoreClosedError } from '../errors.js';
import type { WriteQueue } from './write-queue.js';

interface Row {
  ref: string;
  identity: string;
  cipher_suite: number;
  expires_at: number;
  body: string;
}

function statements(db: BetterSqlite3.Database) {
  return {
    exists: db.prepare<[string], number>('SELECT 1 FROM mls_key_packages WHERE ref = ?').pluck(),
    live: db
      .prepare<[string, number], number>('SELECT count(*) FROM mls_key_packages WHERE identity = ? AND expires_at > ?')
      .pluck(),
    expiredOf: db.prepare<[string, number], { rowid: number; bytes: number }>(
      'SELECT rowid, length(body) AS bytes FROM mls_key_packages WHERE identity = ? AND expires_at <= ?',
    ),
    insert: db.prepare(
      'INSERT INTO mls_key_packages (ref, identity, cipher_suite, expires_at, body) VALUES (?, ?, ?, ?, ?)',
    ),
    // The identity index holds rowids in order, so "oldest first" reads no more than that identity's rows.
    oldest: db.prepare<[string, number], Row & { rowid: number }>(
      `SELECT rowid, ref, identity, cipher_suite, expires_at, body FROM mls_key_packages
       WHERE identity = ? AND expires_at > ? ORDER BY rowid LIMIT 1`,
    ),
    oldestOfSuite: db.prepare<[string, number, number], Row & { rowid: number }>(
      `SELECT rowid, ref, identity, cipher_suite, expires_at, body FROM mls_key_packages
       WHERE identity = ? AND expires_at > ? AND cipher_suite = ? ORDER BY rowid LIMIT 1`,
    ),
    expired: db.prepare<[number, number], { rowid: number; bytes: number }>(
      'SELECT rowid, length(body) AS bytes FROM mls_key_packages WHERE expires_at <= ? ORDER BY expires_at LIMIT ?',
    ),
    deleteRow: db.prepare('DELETE FROM mls_key_packages WHERE rowid = ?'),
    lastResortSize: db
      .prepare<[string], number>('SELECT length(body) FROM mls_last_resort_key_packages WHERE identity = ?')
      .pluck(),
    putLastResort: db.prepare(
      `INSERT INTO mls_last_resort_key_packages (identity, ref, cipher_suite, expires_at, body) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (identity) DO UPDATE SET ref = excluded.ref, cipher_suite = excluded.cipher_suite,
       expires_at = excluded.expires_at, body = excluded.body`,
    ),
    lastResort: db.prepare<[string, number], Row>(
      `SELECT ref, identity, cipher_suite, expires_at, body FROM mls_last_resort_key_packages
       WHERE identity = ? AND expires_at > ?`,
    ),
    expiredLastResort: db.prepare<[number, number], { identity: string; bytes: number }>(
      `DELETE FROM mls_last_resort_key_packages WHERE identity IN
       (SELECT identity FROM mls_last_resort_key_packages WHERE expires_at <= ? LIMIT ?)
       RETURNING identity, length(body) AS bytes`,
    ),
    totals: db.prepare<[], Totals>("SELECT count, bytes FROM totals WHERE name = 'mls_key_packages'"),
    total: db.prepare("UPDATE totals SET count = count + ?, bytes = bytes + ? WHERE name = 'mls_key_packages'"),
  };
}

/**
 * Key packages on SQLite (the relay's file): a publish and a take are each one write of the shared
 * `WriteQueue`, so the caps are checked and the row is taken in the same transaction, and two
 * concurrent takes never hand out the same key package. Running totals keep the store-wide
 * caps O(1).
 */
export class SqliteKeyPackageStore implements KeyPackageStore {
  readonly limits: KeyPackageLimits;
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, limits: Partial<KeyPackageLimits> = {}) {
    this.limits = checkKeyPackageLimits({ ...DEFAULT_KEY_PACKAGE_LIMITS, ...limits });
    this.#writer = writer;
    this.#s = statements(db);
  }

  async publish(identity: string, packages: readonly KeyPackageInput[], options: PublishOptions): Promise<number> {
    this.#open();
    checkKeyPackageInput(identity, packages, options);
    const s = this.#s;
    return this.#writer.run(() => {
      // The identity's expired ones go first: they would only hold its cap and the store's bytes.
      const expired = s.expiredOf.all(identity, options.now);
      for (const row of expired) s.deleteRow.run(row.rowid);
      if (expired.length > 0) s.total.run(-expired.length, -expired.reduce((n, r) => n + r.bytes, 0));
      let live = s.live.get(identity, options.now)!;
      let { count, bytes } = s.totals.get()!;
      let added = 0;
      for (const p of packages) {
        if (s.exists.get(p.ref) !== undefined || p.expiresAt <= options.now) continue;
        const size = p.keyPackage.length;
        if (live >= options.maxPerIdentity || count >= this.limits.maxTotal || bytes + size > this.limits.maxBytes)
          break;
        s.insert.run(p.ref, identity, p.cipherSuite, p.expiresAt, p.keyPackage);
        s.total.run(1, size);
        live++;
        count++;
        bytes += size;
        added++;
      }
      return added;
    });
  }

  async take(identity: string, cipherSuite: number | undefined, now: number): Promise<StoredKeyPackage | undefined> {
    this.#open();
    const s = this.#s;
    return this.#writer.run(() => {
      const row =
        cipherSuite === undefined ? s.oldest.get(identity, now) : s.oldestOfSuite.get(identity, now, cipherSuite);
      if (row === undefined) return undefined;
      s.deleteRow.run(row.rowid);
      s.total.run(-1, -row.body.length);
      return {
        identity: row.identity,
        ref: row.ref,
        keyPackage: row.body,
        cipherSuite: row.cipher_suite,
        expiresAt: row.expires_at,
      };
    });
  }

  async count(identity: string, now: number): Promise<number> {
    this.#open();
    return this.#s.live.get(identity, now)!;
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#writer.run(() => {
      const rows = this.#s.expired.all(now, n);
      for (const row of rows) this.#s.deleteRow.run(row.rowid);
      const last = rows.length < n ? this.#s.expiredLastResort.all(now, n - rows.length) : [];
      const gone = [...rows, ...last];
      if (gone.length > 0) this.#s.total.run(-gone.length, -gone.reduce((sum, r) => sum + r.bytes, 0));
      return gone.length;
    });
  }

  async putLastResort(identity: string, keyPackage: KeyPackageInput, now: number): Promise<boolean> {
    this.#open();
    checkKeyPackageInput(identity, [keyPackage], { now, maxPerIdentity: 1 });
    if (keyPackage.expiresAt <= now) return false;
    return this.#writer.run(() => {
      const old = this.#s.lastResortSize.get(identity);
      const count = old === undefined ? 1 : 0;
      const bytes = keyPackage.keyPackage.length - (old ?? 0);
      const totals = this.#s.totals.get()!;
      if (totals.count + count > this.limits.maxTotal || totals.bytes + bytes > this.limits.maxBytes) return false;
      this.#s.putLastResort.run(
        identity,
        keyPackage.ref,
        keyPackage.cipherSuite,
        keyPackage.expiresAt,
        keyPackage.keyPackage,
      );
      this.#s.total.run(count, bytes);
      return true;
    });
  }

  async lastResort(
    identity: string,
    cipherSuite: number | undefined,
    now: number,
  ): Promise<StoredKeyPackage | undefined> {
    this.#open();
    const row = this.#s.lastResort.get(identity, now);
    if (row === undefined || (cipherSuite !== undefined && row.cipher_suite !== cipherSuite)) return undefined;
    return {
      identity: row.identity,
      ref: row.ref,
      keyPackage: row.body,
      cipherSuite: row.cipher_suite,
      expiresAt: row.expires_at,
    };
  }

  async totals(): Promise<Totals> {
    this.#open();
    return { ...this.#s.totals.get()! };
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }
}
