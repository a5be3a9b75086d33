import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionRecord } from '@wmp/session';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreWriteError } from '../src/node.js';
import { openDatabase, SqliteSessionStore, WriteQueue } from '../src/sqlite.js';

// The decoded-record cache of SqliteSessionStore: what `get` returns is always what is committed,
// whatever the cache holds, and callers can never reach into it.
const HOUR = 3600_000;
let n = 0;

function record(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const now = Date.now();
  return {
    id: `ses-cache${++n}`,
    version: '0.1',
    initiator: 'did:key:z6MkAlice',
    participants: ['did:key:z6MkAlice'],
    capabilities: { messaging: {}, offline: { ttl: 3600 } },
    security: { mode: 'tls' },
    state: 'active',
    authenticated: ['did:key:z6MkAlice'],
    challenge: undefined,
    resumptionTokens: [{ hash: 'h'.repeat(43), identity: 'did:key:z6MkAlice' }],
    createdAt: now,
    expiresAt: now + HOUR,
    ...overrides,
  } as SessionRecord;
}

describe('SqliteSessionStore cache', () => {
  const dirs: string[] = [];
  const dbs: BetterSqlite3.Database[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function open(cacheSize?: number) {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-session-cache-'));
    dirs.push(dir);
    const db = openDatabase(join(dir, 'relay.db'));
    dbs.push(db);
    const writer = new WriteQueue(db);
    const store = new SqliteSessionStore(db, writer, cacheSize === undefined ? {} : { cacheSize });
    // A second store on the same file without a cache reads the rows themselves.
    const rows = new SqliteSessionStore(db, writer, { cacheSize: 0 });
    return { writer, store, rows };
  }

  it('hands out the committed record: what a change builds is what every reader sees', async () => {
    const { store, rows } = open();
    const r = record();
    await store.create(r);
    const first = (await store.get(r.id))!;
    await store.update(r.id, (s) => ({ ...s, authenticated: [...s.authenticated, 'did:key:z6MkBob'] }));
    const again = await store.get(r.id);
    expect(first.authenticated).toEqual(['did:key:z6MkAlice']);
    expect(again?.authenticated).toEqual(['did:key:z6MkAlice', 'did:key:z6MkBob']);
    expect(await rows.get(r.id)).toEqual(again);
  });

  it('applies changes in flight one after another, as the rows do', async () => {
    const { store, rows } = open();
    const r = record();
    await store.create(r);
    const writes = [
      store.update(r.id, (s) => ({ ...s, state: 'pending' })),
      store.update(r.id, (s) => ({ ...s, state: s.state === 'pending' ? 'closed' : 'active' })),
    ];
    // Before the batch commits, a read gives the committed record.
    expect((await store.get(r.id))?.state).toBe('active');
    await Promise.all(writes);
    expect((await store.get(r.id))?.state).toBe('closed');
    expect((await rows.get(r.id))?.state).toBe('closed');
    await store.delete(r.id);
    expect(await store.get(r.id)).toBeUndefined();
  });

  it('forgets what a failed transaction wrote', async () => {
    const { writer, store, rows } = open();
    const r = record();
    await store.create(r);
    expect((await store.get(r.id))?.state).toBe('active'); // cached
    let fail = true;
    writer.onBeforeCommit(() => {
      if (fail) throw new Error('disk full');
    });
    await expect(store.update(r.id, (s) => ({ ...s, state: 'closed' }))).rejects.toBeInstanceOf(StoreWriteError);
    fail = false;
    expect((await store.get(r.id))?.state).toBe('active');
    expect((await rows.get(r.id))?.state).toBe('active');
  });

  it('stays bounded and reads evicted records back from their rows', async () => {
    const { store } = open(2);
    const records = [record(), record(), record()];
    for (const r of records) await store.create(r);
    for (const r of records) expect(await store.get(r.id)).toEqual(r);
  });

  it('drops swept records', async () => {
    const { store } = open();
    const now = Date.now();
    const gone = record({ expiresAt: now - 1 });
    const kept = record();
    await store.create(gone);
    await store.create(kept);
    expect(await store.get(gone.id)).toEqual(gone);
    expect(await store.sweep(now)).toBe(1);
    expect(await store.get(gone.id)).toBeUndefined();
    expect(await store.get(kept.id)).toEqual(kept);
  });
});
