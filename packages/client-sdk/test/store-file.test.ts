import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore } from '../src/node.js';
import { storeSuite } from './store-suite.js';

const root = mkdtempSync(join(tmpdir(), 'wmp-file-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dirOf = () => join(root, `s${++n}`, 'nested');

storeSuite('FileStore', {
  open: async () => new FileStore(dirOf()),
  reopen: async (store) => new FileStore((store as FileStore).dir),
});

describe('FileStore on disk', () => {
  it('writes files 0600 in a directory 0700, one per key', async () => {
    const store = new FileStore(dirOf());
    await store.set('identity', 'secret');
    await store.set('mailbox/relay/http://127.0.0.1:1', '{}');
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    const names = readdirSync(store.dir).sort();
    expect(names).toEqual(['identity', 'mailbox%2Frelay%2Fhttp%3A%2F%2F127%2E0%2E0%2E1%3A1']);
    for (const name of names) expect(statSync(join(store.dir, name)).mode & 0o777).toBe(0o600);
  });

  it('replaces a value by renaming a new file over it, leaving no temporary file', async () => {
    const store = new FileStore(dirOf());
    await store.set('cursor', '1');
    const before = statSync(join(store.dir, 'cursor')).ino;
    await store.set('cursor', '2');
    // A rename gives the name a new inode; writing in place would keep the old one.
    expect(statSync(join(store.dir, 'cursor')).ino).not.toBe(before);
    expect(readdirSync(store.dir)).toEqual(['cursor']);
    expect(statSync(join(store.dir, 'cursor')).mode & 0o777).toBe(0o600);
  });

  it('ignores a write cut off by a crash: the old value stays, the stale temporary file is removed', async () => {
    const dir = dirOf();
    const first = new FileStore(dir);
    await first.set('cursor', '{"after":4}');
    // What a crash between write and rename leaves behind: a partial temporary file.
    const partial = join(dir, '.tmp-crashed');
    writeFileSync(partial, '{"after":', { mode: 0o600 });
    const fresh = join(dir, '.tmp-in-flight');
    writeFileSync(fresh, '{"after":9', { mode: 0o600 });
    const old = (Date.now() - 3600_000) / 1000;
    utimesSync(partial, old, old);
    const store = new FileStore(dir);
    expect(await store.get('cursor')).toBe('{"after":4}');
    expect(await store.keys('')).toEqual(['cursor']);
    expect(existsSync(partial)).toBe(false);
    // A recent one may belong to a writer still at work: left alone, and never read as a key.
    expect(existsSync(fresh)).toBe(true);
  });

  it('skips files it did not write, and keeps a long key in a hashed file that names it', async () => {
    const store = new FileStore(dirOf());
    const long = `mailbox/relay/https://${'a'.repeat(300)}.example`;
    await store.set(long, 'v');
    writeFileSync(join(store.dir, 'README'), 'not a key');
    writeFileSync(join(store.dir, '%61'), 'not canonical');
    writeFileSync(join(store.dir, '~garbage'), 'not json');
    expect(await store.keys('')).toEqual([long]);
    const hashed = readdirSync(store.dir).filter((f) => /^~[0-9a-f]{64}$/.test(f));
    expect(hashed).toHaveLength(1);
    expect(statSync(join(store.dir, hashed[0]!)).mode & 0o777).toBe(0o600);
    expect(await store.get(long)).toBe('v');
  });
});
