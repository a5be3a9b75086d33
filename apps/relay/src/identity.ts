// The relay's own Ed25519 key: a 32-byte seed kept in the data directory (hex, mode 0600), made on
// the first start and reused after, so relay_chain entries and the well-known `relay` id stay the
// same across restarts and resumed sessions keep their relay.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { RelayAppError } from './errors.js';

/** The key file's name inside the data directory. */
export const IDENTITY_FILE = 'relay-identity.key';
/** The database file's name inside the data directory. */
export const DATABASE_FILE = 'relay.db';

/** The relay key file cannot be used: the message names the file and what is wrong with it. */
export class IdentityFileError extends RelayAppError {
  declare readonly code: 'ERR_IDENTITY_FILE';
  constructor(message: string) {
    super('ERR_IDENTITY_FILE', message);
    this.name = 'IdentityFileError';
  }
}

export interface LoadedIdentity {
  readonly seed: Uint8Array;
  /** True when this call made the key (first start). */
  readonly created: boolean;
  readonly path: string;
  /** True when the file can be read by group or others (the caller warns). */
  readonly tooOpen: boolean;
}

function decode(text: string, path: string): Uint8Array {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) {
    throw new IdentityFileError(`${path}: not a relay key (64 hex digits expected); refusing to replace it`);
  }
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/**
 * Creates the data directory if needed (mode 0700; a new one gets a `.gitignore` of `*`, so a
 * `./data` in a checkout is never committed), then reads the relay key, or writes a new one.
 * The new key is written to a temporary file, fsynced and hard-linked into place, so a crash
 * never leaves half a key and two starts racing keep the same one. A key file that is present
 * but unreadable is an error, never overwritten.
 */
export function loadOrCreateIdentity(dataDir: string): LoadedIdentity {
  const created = mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (created !== undefined) {
    try {
      writeFileSafely(join(dataDir, '.gitignore'), '*\n', 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const path = join(dataDir, IDENTITY_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== undefined) {
    return { seed: decode(text, path), created: false, path, tooOpen: (statSync(path).mode & 0o077) !== 0 };
  }
  const seed = Uint8Array.from(randomBytes(32));
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSafely(tmp, `${Buffer.from(seed).toString('hex')}\n`, 0o600);
  try {
    linkSync(tmp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process made it first: use that one.
    unlinkSync(tmp);
    return loadOrCreateIdentity(dataDir);
  }
  unlinkSync(tmp);
  fsyncDir(dataDir);
  return { seed, created: true, path, tooOpen: false };
}

/**
 * Reads a relay key given by `--relay-key-file` (the cluster's one key, or a single node's key kept
 * outside its data directory): never made or replaced here, since nodes making their own would
 * get different relay ids. Refuses a key the group or others may read.
 */
export function readRelayKeyFile(path: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new IdentityFileError(`${path}: cannot read the relay key (${code})`);
  }
  if ((statSync(path).mode & 0o077) !== 0) {
    throw new IdentityFileError(`${path}: the relay key must not be readable by group or others (chmod 600)`);
  }
  return decode(text, path);
}

function writeFileSafely(path: string, text: string, mode: number): void {
  const fd = openSync(path, 'wx', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not every platform can fsync a directory; the key itself is already on disk.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The database file's path, the file made 0600 before SQLite opens it: it holds sessions and
 * queued messages, and SQLite gives its `-wal` and `-shm` files the database file's mode (it would
 * create all three 0644 under the usual umask). One an earlier version made 0644 is narrowed too.
 */
export function prepareDatabaseFile(dataDir: string): string {
  const path = join(dataDir, DATABASE_FILE);
  closeSync(openSync(path, 'a', 0o600)); // an empty file is an empty database to SQLite
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return path;
}
