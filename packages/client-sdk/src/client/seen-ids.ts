import type { ClientStore } from '../store/store.js';

/** Ids per stored bucket: a message rewrites one bucket, so this bounds the bytes written per message. */
const BUCKET_SIZE = 128;

interface Bucket {
  readonly n: number;
  readonly ids: string[];
}

function bucketKey(prefix: string, n: number): string {
  return `${prefix}${String(n).padStart(12, '0')}`;
}

/**
 * The ids of messages already handed to the application, bounded and kept in a `ClientStore`,
 * so that a message the relay delivers again (at-least-once) is recognised after a reconnect or
 * a restart. Stored as numbered buckets of ids (JSON arrays); past `maxIds`, the oldest bucket
 * is forgotten whole.
 */
export class SeenIds {
  readonly #store: ClientStore;
  readonly #prefix: string;
  readonly #maxBuckets: number;
  /** id -> the bucket that holds it. */
  readonly #ids = new Map<string, number>();
  readonly #buckets: Bucket[] = [];
  #writes: Promise<void> = Promise.resolve();

  private constructor(store: ClientStore, prefix: string, maxIds: number) {
    this.#store = store;
    this.#prefix = prefix;
    this.#maxBuckets = Math.max(1, Math.ceil(maxIds / BUCKET_SIZE));
  }

  /** Reads the stored buckets under `prefix` (unreadable ones are dropped). */
  static async load(store: ClientStore, prefix: string, maxIds: number): Promise<SeenIds> {
    const seen = new SeenIds(store, prefix, maxIds);
    const numbered: number[] = [];
    for (const key of await store.keys(prefix)) {
      const n = Number(key.slice(prefix.length));
      if (Number.isSafeInteger(n) && n > 0) numbered.push(n);
      else await store.delete(key);
    }
    numbered.sort((a, b) => a - b);
    const stale = numbered.splice(0, Math.max(0, numbered.length - seen.#maxBuckets));
    for (const n of stale) await store.delete(bucketKey(prefix, n));
    for (const n of numbered) {
      const ids = parseIds(await store.get(bucketKey(prefix, n)));
      if (ids === undefined) {
        await store.delete(bucketKey(prefix, n));
        continue;
      }
      seen.#buckets.push({ n, ids });
      for (const id of ids) seen.#ids.set(id, n);
    }
    return seen;
  }

  get size(): number {
    return this.#ids.size;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /** Remembers `ids`; resolves once they are stored. */
  add(ids: readonly string[]): Promise<void> {
    const touched = new Set<Bucket>();
    const dropped: number[] = [];
    for (const id of ids) {
      if (this.#ids.has(id)) continue;
      let bucket = this.#buckets.at(-1);
      if (!bucket || bucket.ids.length >= BUCKET_SIZE) {
        bucket = { n: (bucket?.n ?? 0) + 1, ids: [] };
        this.#buckets.push(bucket);
        if (this.#buckets.length > this.#maxBuckets) {
          const oldest = this.#buckets.shift()!;
          for (const old of oldest.ids) if (this.#ids.get(old) === oldest.n) this.#ids.delete(old);
          touched.delete(oldest);
          dropped.push(oldest.n);
        }
      }
      bucket.ids.push(id);
      this.#ids.set(id, bucket.n);
      touched.add(bucket);
    }
    if (touched.size === 0 && dropped.length === 0) return this.#writes;
    const writes = [...touched].map((b) => ({ key: bucketKey(this.#prefix, b.n), value: JSON.stringify(b.ids) }));
    const deletes = dropped.map((n) => bucketKey(this.#prefix, n));
    // One write at a time, in order: a later bucket state never lands before an earlier one.
    const run = async () => {
      for (const w of writes) await this.#store.set(w.key, w.value);
      for (const key of deletes) await this.#store.delete(key);
    };
    const next = this.#writes.then(run, run);
    this.#writes = next.catch(() => undefined);
    return next;
  }

  /** Resolves when every write so far has been attempted. */
  flush(): Promise<void> {
    return this.#writes;
  }
}

function parseIds(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value) && value.length <= BUCKET_SIZE && value.every((x) => typeof x === 'string')) {
      return value as string[];
    }
  } catch {
    // fall through
  }
  return undefined;
}
