import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { escapedName, HASHED_NAME_PREFIX, keyOfName, TEMP_NAME_PREFIX } from './file-names.js';
import type { ClientStore } from './store.js';
import { checkStoreKey, checkStorePrefix, checkStoreValue } from './store.js';

/** A temporary file older than this was left by a crash mid-write and is removed. */
const STALE_TEMP_MS = 60_000;

interface HashedEntry {
  readonly key: string;
  readonly value: string;
}

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown })?.code === 'ENOENT';
}

/**
 * A store in a directory (Node): one file per key, named after the key, mode 0600 in a 0700
 * directory. A write goes to a temporary file that is synced and then renamed over the old one,
 * so a crash leaves the old value or the new one, never a mix. One process per directory.
 */
export class FileStore implements ClientStore {
  readonly dir: string;
  #ready: Promise<void> | undefined;

  constructor(dir: string) {
    if (typeof dir !== 'string' || dir.length === 0) throw new TypeError('FileStore needs a directory');
    this.dir = dir;
  }

  async get(key: string): Promise<string | undefined> {
    checkStoreKey(key);
    await this.#init();
    const { path, hashed } = this.#fileOf(key);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    if (!hashed) return text;
    const entry = parseHashedEntry(text);
    return entry?.key === key ? entry.value : undefined;
  }

  async set(key: string, value: string): Promise<void> {
    checkStoreKey(key);
    checkStoreValue(value);
    await this.#init();
    const { path, hashed } = this.#fileOf(key);
    const temp = join(this.dir, `${TEMP_NAME_PREFIX}${randomUUID()}`);
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(hashed ? JSON.stringify({ key, value }) : value, 'utf8');
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await this.#syncDir();
  }

  async delete(key: string): Promise<void> {
    checkStoreKey(key);
    await this.#init();
    await rm(this.#fileOf(key).path, { force: true });
  }

  async keys(prefix: string): Promise<string[]> {
    checkStorePrefix(prefix);
    await this.#init();
    const keys: string[] = [];
    for (const name of await readdir(this.dir)) {
      let key: string | undefined;
      if (name.startsWith(HASHED_NAME_PREFIX)) {
        const text = await readFile(join(this.dir, name), 'utf8').catch(() => undefined);
        key = text === undefined ? undefined : parseHashedEntry(text)?.key;
      } else {
        key = keyOfName(name);
      }
      if (key?.startsWith(prefix)) keys.push(key);
    }
    return keys.sort();
  }

  #fileOf(key: string): { path: string; hashed: boolean } {
    const name = escapedName(key);
    if (name !== undefined) return { path: join(this.dir, name), hashed: false };
    const hash = createHash('sha256').update(key, 'utf8').digest('hex');
    return { path: join(this.dir, HASHED_NAME_PREFIX + hash), hashed: true };
  }

  #init(): Promise<void> {
    this.#ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const now = Date.now();
      for (const name of await readdir(this.dir)) {
        if (!name.startsWith(TEMP_NAME_PREFIX)) continue;
        const path = join(this.dir, name);
        const info = await stat(path).catch(() => undefined);
        if (info && now - info.mtimeMs > STALE_TEMP_MS) await rm(path, { force: true });
      }
    })().catch((error: unknown) => {
      this.#ready = undefined; // a later call tries again (e.g. once the disk has room)
      throw error;
    });
    return this.#ready;
  }

  /** Makes the rename itself durable; not every platform can open a directory, so it is best effort. */
  async #syncDir(): Promise<void> {
    try {
      const handle = await open(this.dir, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch {
      // Windows cannot fsync a directory; the rename is still atomic there.
    }
  }
}

function parseHashedEntry(text: string): HashedEntry | undefined {
  try {
    const entry = JSON.parse(text) as Partial<HashedEntry>;
    return typeof entry?.key === 'string' && typeof entry.value === 'string' ? (entry as HashedEntry) : undefined;
  } catch {
    return undefined;
  }
}
