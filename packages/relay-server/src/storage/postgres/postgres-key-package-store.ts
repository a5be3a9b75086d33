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
import type { PostgresDatabase } from './postgres-database.js';
import type { TxTotals } from './write-tx.js';

const TOTALS = 'mls_key_packages';

interface Row {
  ref: string;
  identity: string;
  cipher_suite: number;
  expires_at: number;
  size: number;
  body: string;
}

const COLUMNS = 'ref, identity, cipher_suite, expires_at, size, body';

const SQL = {
  live: 'SELECT count(*) AS n FROM mls_key_packages WHERE identity = $1 AND expires_at > $2',
  existing: 'SELECT ref FROM mls_key_packages WHERE ref = ANY($1::text[])',
  // The identity's expired ones go first: they would only hold its cap and the store's bytes.
  // Those a sweep holds right now are the sweep's.
  expiredOf: `SELECT id, size FROM mls_key_packages WHERE identity = $1 AND expires_at <= $2
              FOR UPDATE SKIP LOCKED`,
  deleteIds: 'DELETE FROM mls_key_packages WHERE id = ANY($1::bigint[])',
  // In the order given: the identity column numbers them in publish order. A ref another node
  // stored meanwhile is skipped, as one stored before.
  insert: `INSERT INTO mls_key_packages (ref, identity, cipher_suite, expires_at, size, body)
           SELECT ref, $1::text, cs, exp, size, body
           FROM unnest($2::text[], $3::integer[], $4::bigint[], $5::integer[], $6::text[]) WITH ORDINALITY
             AS u(ref, cs, exp, size, body, n)
           ORDER BY n
           ON CONFLICT (ref) DO NOTHING RETURNING size`,
  // Single use across nodes: a row another transaction is taking is skipped, never waited for.
  take: `DELETE FROM mls_key_packages WHERE ctid =
           (SELECT ctid FROM mls_key_packages
            WHERE identity = $1 AND expires_at > $2 AND ($3::integer IS NULL OR cipher_suite = $3)
            ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING ${COLUMNS}`,
  lastResortSize: 'SELECT size FROM mls_last_resort_key_packages WHERE identity = $1',
  putLastResort: `INSERT INTO mls_last_resort_key_packages (identity, ref, cipher_suite, expires_at, size, body)
                  VALUES ($1, $2, $3, $4, $5, $6)
                  ON CONFLICT (identity) DO UPDATE SET ref = excluded.ref, cipher_suite = excluded.cipher_suite,
                  expires_at = excluded.expires_at, size = excluded.size, body = excluded.body`,
  lastResort: `SELECT ${COLUMNS} FROM mls_last_resort_key_packages WHERE identity = $1 AND expires_at > $2`,
  sweep: `DELETE FROM mls_key_packages WHERE ctid = ANY(ARRAY(
            SELECT ctid FROM mls_key_packages WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
            FOR UPDATE SKIP LOCKED))
          RETURNING size`,
  expiredLastResort: `SELECT identity FROM mls_last_resort_key_packages WHERE expires_at <= $1
                      ORDER BY expires_at LIMIT $2`,
  sweepLastResort: `DELETE FROM mls_last_resort_key_packages WHERE identity = ANY($1::text[]) AND expires_at <= $2
                    RETURNING size`,
  totals: `SELECT count, bytes FROM wmp_totals WHERE name = '${TOTALS}'`,
} as const;

/** The advisory lock that orders the writes of one identity's key packages (publish, last resort). */
const identityLock = (identity: string) => `kp:${identity}`;

/** The store-wide caps as `fits` decisions (checked again at COMMIT, see `TxTotals`). */
function fitsStore(totals: TxTotals, limits: KeyPackageLimits, count: number, bytes: number): boolean {
  return totals.fits(TOTALS, 'count', count, limits.maxTotal) && totals.fits(TOTALS, 'bytes', bytes, limits.maxBytes);
}

function stored(row: Row): StoredKeyPackage {
  return {
    identity: row.identity,
    ref: row.ref,
    keyPackage: row.body,
    cipherSuite: row.cipher_suite,
    expiresAt: row.expires_at,
  };
}

/**
 * Key packages on PostgreSQL, shared by every node. A take is one statement that deletes the
 * oldest matching row it can lock (`FOR UPDATE SKIP LOCKED`): two nodes taking at once get two
 * different key packages, never the same one twice, and never wait for each other. A publish
 * holds its identity's advisory lock, so the per-identity cap holds across nodes; the store-wide
 * caps are checked against the totals row in the same transaction. Sizes are the key package
 * text's length, as in the other adapters.
 */
export class PostgresKeyPackageStore implements KeyPackageStore {
  readonly limits: KeyPackageLimits;
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase, limits: Partial<KeyPackageLimits> = {}) {
    this.limits = checkKeyPackageLimits({ ...DEFAULT_KEY_PACKAGE_LIMITS, ...limits });
    this.#db = db;
  }

  async publish(identity: string, packages: readonly KeyPackageInput[], options: PublishOptions): Promise<number> {
    this.#open();
    checkKeyPackageInput(identity, packages, options);
    const { now, maxPerIdentity } = options;
    return this.#db.writer.run({
      locks: { keys: [identityLock(identity)] },
      atomic: true,
      run: async (tx) => {
        const totals = await tx.totals();
        const [live, existing, expired] = await Promise.all([
          tx.query<{ n: number }>(SQL.live, [identity, now], 'wmp_kp_live'),
          tx.query<{ ref: string }>(SQL.existing, [packages.map((p) => p.ref)], 'wmp_kp_existing'),
          tx.query<{ id: number; size: number }>(SQL.expiredOf, [identity, now], 'wmp_kp_expired_of'),
        ]);
        const freed = expired.rows.reduce((sum, r) => sum + r.size, 0);
        totals.add(TOTALS, -expired.rows.length, -freed);
        const skip = new Set(existing.rows.map((r) => r.ref));
        let count = live.rows[0]!.n;
        const chosen: KeyPackageInput[] = [];
        for (const p of packages) {
          if (skip.has(p.ref) || p.expiresAt <= now) continue;
          const size = p.keyPackage.length;
          const planned = chosen.reduce((sum, c) => sum + c.keyPackage.length, 0);
          if (count >= maxPerIdentity) break;
          // The planned ones are not in the totals yet: count them into the comparison.
          if (!fitsStore(totals, this.limits, chosen.length + 1, planned + size)) break;
          skip.add(p.ref);
          chosen.push(p);
          count++;
        }
        if (expired.rows.length > 0) {
          await tx.query(SQL.deleteIds, [expired.rows.map((r) => r.id)], 'wmp_kp_delete_ids');
        }
        if (chosen.length === 0) return 0;
        const { rows } = await tx.query<{ size: number }>(
          SQL.insert,
          [
            identity,
            chosen.map((p) => p.ref),
            chosen.map((p) => p.cipherSuite),
            chosen.map((p) => p.expiresAt),
            chosen.map((p) => p.keyPackage.length),
            chosen.map((p) => p.keyPackage),
          ],
          'wmp_kp_insert',
        );
        totals.add(
          TOTALS,
          rows.length,
          rows.reduce((sum, r) => sum + r.size, 0),
        );
        return rows.length;
      },
    });
  }

  async take(identity: string, cipherSuite: number | undefined, now: number): Promise<StoredKeyPackage | undefined> {
    this.#open();
    return this.#db.writer.run({
      atomic: true,
      run: async (tx) => {
        const totals = await tx.totals();
        const { rows } = await tx.query<Row>(SQL.take, [identity, now, cipherSuite ?? null], 'wmp_kp_take');
        const row = rows[0];
        if (row === undefined) return undefined;
        totals.add(TOTALS, -1, -row.size);
        return stored(row);
      },
    });
  }

  async count(identity: string, now: number): Promise<number> {
    this.#open();
    return (await this.#db.read<{ n: number }>(SQL.live, [identity, now], 'wmp_kp_live'))[0]!.n;
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#db.writer.run({
      alone: true,
      run: async (tx) => {
        const totals = await tx.totals();
        const gone = (await tx.query<{ size: number }>(SQL.sweep, [now, n], 'wmp_kp_sweep')).rows;
        if (gone.length < n) {
          const found = await tx.query<{ identity: string }>(
            SQL.expiredLastResort,
            [now, n - gone.length],
            'wmp_kp_expired_last_resort',
          );
          if (found.rows.length > 0) {
            // Under the identities' locks, so a replacement in flight is not counted away.
            const identities = found.rows.map((r) => r.identity);
            await tx.lock('keys', identities.map(identityLock));
            const last = await tx.query<{ size: number }>(
              SQL.sweepLastResort,
              [identities, now],
              'wmp_kp_sweep_last_resort',
            );
            gone.push(...last.rows);
          }
        }
        totals.add(TOTALS, -gone.length, -gone.reduce((sum, r) => sum + r.size, 0));
        return gone.length;
      },
    });
  }

  async putLastResort(identity: string, keyPackage: KeyPackageInput, now: number): Promise<boolean> {
    this.#open();
    checkKeyPackageInput(identity, [keyPackage], { now, maxPerIdentity: 1 });
    if (keyPackage.expiresAt <= now) return false;
    return this.#db.writer.run({
      locks: { keys: [identityLock(identity)] },
      atomic: true,
      run: async (tx) => {
        const totals = await tx.totals();
        const old = (await tx.query<{ size: number }>(SQL.lastResortSize, [identity], 'wmp_kp_last_resort_size'))
          .rows[0]?.size;
        const size = keyPackage.keyPackage.length;
        const count = old === undefined ? 1 : 0;
        const bytes = size - (old ?? 0);
        if (!fitsStore(totals, this.limits, count, bytes)) return false;
        await tx.query(
          SQL.putLastResort,
          [identity, keyPackage.ref, keyPackage.cipherSuite, keyPackage.expiresAt, size, keyPackage.keyPackage],
          'wmp_kp_put_last_resort',
        );
        totals.add(TOTALS, count, bytes);
        return true;
      },
    });
  }

  async lastResort(
    identity: string,
    cipherSuite: number | undefined,
    now: number,
  ): Promise<StoredKeyPackage | undefined> {
    this.#open();
    const row = (await this.#db.read<Row>(SQL.lastResort, [identity, now], 'wmp_kp_last_resort'))[0];
    if (row === undefined || (cipherSuite !== undefined && row.cipher_suite !== cipherSuite)) return undefined;
    return stored(row);
  }

  async totals(): Promise<Totals> {
    this.#open();
    const row = (await this.#db.read<Totals>(SQL.totals, [], 'wmp_kp_totals'))[0]!;
    return { count: row.count, bytes: row.bytes };
  }

  #open(): void {
    if (this.#db.closed) throw new StoreClosedError();
  }
}
