import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RelayAppError } from '../src/errors.js';
import {
  DATABASE_FILE,
  IDENTITY_FILE,
  IdentityFileError,
  loadOrCreateIdentity,
  prepareDatabaseFile,
} from '../src/identity.js';

const root = mkdtempSync(join(tmpdir(), 'wmp-relay-identity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `case-${++n}`);

describe('the relay key in the data directory', () => {
  it('is created on the first start (mode 0600, 32 bytes in hex) and reused after', () => {
    const dir = fresh();
    const first = loadOrCreateIdentity(dir);
    expect(first.created).toBe(true);
    expect(first.seed).toHaveLength(32);
    expect(first.path).toBe(join(dir, IDENTITY_FILE));
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(first.path, 'utf8')).toBe(`${Buffer.from(first.seed).toString('hex')}\n`);
    const again = loadOrCreateIdentity(dir);
    expect(again.created).toBe(false);
    expect(again.tooOpen).toBe(false);
    expect(Buffer.from(again.seed).equals(Buffer.from(first.seed))).toBe(true);
    // No temporary files left behind.
    expect(readdirSync(dir).sort()).toEqual(['.gitignore', IDENTITY_FILE]);
  });

  it('gives each new data directory its own key', () => {
    const a = loadOrCreateIdentity(fresh()).seed;
    const b = loadOrCreateIdentity(fresh()).seed;
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });

  it('writes a .gitignore only into a directory it created', () => {
    const made = fresh();
    loadOrCreateIdentity(join(made, 'nested', 'data'));
    expect(readFileSync(join(made, 'nested', 'data', '.gitignore'), 'utf8')).toBe('*\n');
    const existing = fresh();
    mkdirSync(existing);
    loadOrCreateIdentity(existing);
    expect(existsSync(join(existing, '.gitignore'))).toBe(false);
  });

  it('refuses a damaged key file and never replaces it', () => {
    const dir = fresh();
    mkdirSync(dir);
    writeFileSync(join(dir, IDENTITY_FILE), 'not a key\n', { mode: 0o600 });
    expect(() => loadOrCreateIdentity(dir)).toThrow(IdentityFileError);
    // One family for the app's start-up errors, each with its stable code.
    expect(() => loadOrCreateIdentity(dir)).toThrow(RelayAppError);
    expect(() => loadOrCreateIdentity(dir)).toThrow(expect.objectContaining({ code: 'ERR_IDENTITY_FILE' }));
    expect(() => loadOrCreateIdentity(dir)).toThrow(/not a relay key .* refusing to replace it/);
    expect(readFileSync(join(dir, IDENTITY_FILE), 'utf8')).toBe('not a key\n');
  });

  it('reports a key file readable by others', () => {
    const dir = fresh();
    const { path } = loadOrCreateIdentity(dir);
    chmodSync(path, 0o644);
    expect(loadOrCreateIdentity(dir).tooOpen).toBe(true);
  });
});

describe('the database file in the data directory', () => {
  it('is made 0600 before SQLite opens it, and narrowed to 0600 with its WAL files if it was not', () => {
    const dir = fresh();
    loadOrCreateIdentity(dir);
    const path = prepareDatabaseFile(dir);
    expect(path).toBe(join(dir, DATABASE_FILE));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    for (const f of [path, `${path}-wal`, `${path}-shm`]) {
      writeFileSync(f, '');
      chmodSync(f, 0o644);
    }
    prepareDatabaseFile(dir);
    for (const f of [path, `${path}-wal`, `${path}-shm`]) expect(statSync(f).mode & 0o777).toBe(0o600);
  });
});
