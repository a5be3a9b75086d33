// The one bounded cache of the project: caches and replay sets grow with what peers send, so each
// has a fixed ceiling and forgets its oldest entry first (docs/architecture.md, "Bounds").

function checkMaxSize(maxSize: number): number {
  if (!Number.isSafeInteger(maxSize) || maxSize < 1) throw new RangeError('maxSize must be a positive integer');
  return maxSize;
}

/**
 * A Map of at most `maxSize` entries: setting a new key when full first deletes the oldest (in
 * insertion order). To keep a used entry longest (least recently used goes first), delete it and
 * set it again.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly maxSize: number;

  constructor(maxSize: number) {
    super();
    this.maxSize = checkMaxSize(maxSize);
  }

  override set(key: K, value: V): this {
    if (this.size >= this.maxSize && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}

/** A Set of at most `maxSize` values: adding a new one when full first deletes the oldest. */
export class BoundedSet<T> extends Set<T> {
  readonly maxSize: number;

  constructor(maxSize: number) {
    super();
    this.maxSize = checkMaxSize(maxSize);
  }

  override add(value: T): this {
    if (this.size >= this.maxSize && !this.has(value)) this.delete(this.values().next().value as T);
    return super.add(value);
  }
}
