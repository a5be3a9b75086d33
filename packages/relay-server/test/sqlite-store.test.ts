import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreSchemaError } from '../src/node.js';
import { openDatabase, SCHEMA_VERSION, SqliteStore } from '../src/sqlite.js';
import { event, party } from '../src/storage/testing/events.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const path = () => join(dir, `relay-${++files}.db`);

describe('SQLite database', () => {
  it('runs in WAL mode with synchronous=FULL', () => {
    const db = openDatabase(path());
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('leaves the fsync to its caller (synchronous=NORMAL) only when asked to', () => {
    const db = openDatabase(path(), { syncAfterCommit: true });
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    db.close();
  });

  it('uses rowid tables with UNIQUE(recipient, seq) for both queues', () => {
    const db = openDatabase(path());
    const sqlOf = db
      .prepare<[string], string>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
      .pluck();
    for (const table of ['wmp_messages', 'ohan_events']) {
      expect(sqlOf.get(table)).not.toMatch(/without\s+rowid/i);
      const unique = (db.pragma(`index_list(${table})`) as { name: string; unique: number }[])
        .filter((i) => i.unique === 1)
        .map((i) => (db.pragma(`index_info(${i.name})`) as { name: string }[]).map((c) => c.name).join(','));
      expect(unique).toContain('recipient,seq');
    }
    db.close();
  });

  it('stores no client address, nonce or plaintext: only the columns of the design', () => {
    const db = openDatabase(path());
    const tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck();
    const columns = Object.fromEntries(
      tables.all().map((t) => [t, (db.pragma(`table_info(${t})`) as { name: string }[]).map((c) => c.name).join(',')]),
    );
    expect(columns).toEqual({
      evidence_cases: 'message_id,sender,expires_at,record',
      evidence_parties: 'party,record',
      evidence_records:
        'seq,id,message_id,sender,session_id,event_type,event_time,issuer,parties,expires_at,bytes,body',
      mls_groups: 'session_id,group_id,cipher_suite,epoch,last_commit,expires_at',
      mls_key_packages: 'ref,identity,cipher_suite,expires_at,body',
      mls_last_resort_key_packages: 'identity,ref,cipher_suite,expires_at,body',
      ohan_allow: 'recipient,contact',
      ohan_cards: 'key,ts,body,expires_at',
      ohan_events: 'recipient,seq,id,sender,lane,strength,expires_at,size,body,stored_at',
      ohan_pairs: 'recipient,sender,count,bytes',
      ohan_recipients: 'recipient,next_seq,count,bytes',
      ohan_senders: 'sender,count,bytes',
      // The evidence records' AUTOINCREMENT (a seq is never reused: a page cursor stays valid).
      sqlite_sequence: 'name,seq',
      totals: 'name,count,bytes',
      wmp_messages:
        'recipient,seq,message_id,sender,expires_at,bytes,body,delivered,notify,part,queued_at,evidence,due_at',
      wmp_queue_parts: 'recipient,part,count,bytes',
      wmp_queue_senders: 'recipient,sender,count,bytes',
      wmp_queues: 'recipient,next_seq,count,bytes',
      wmp_sessions: 'id,expires_at,record,pending',
    });
    db.close();
  });

  it('refuses a file written by a newer schema', () => {
    const file = path();
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    expect(() => openDatabase(file)).toThrow(StoreSchemaError);
  });
});

describe('SqliteStore group commit', () => {
  it('commits 100 concurrent appends in few transactions, each acknowledged only after COMMIT and the fsync', async () => {
    const file = path();
    const store = SqliteStore.open({ path: file });
    const reader = new Database(file, { readonly: true });
    const committed = reader
      .prepare<[string], number>("SELECT 1 FROM wmp_messages WHERE recipient = 'did:key:bob' AND message_id = ?")
      .pluck();
    const before = store.writeStats;
    const seen: boolean[] = [];
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        store.queue
          .append(
            'did:key:bob',
            { id: `m${i}`, sender: 'did:key:alice', body: '{}' },
            { expiresAt: Date.now() + 60_000 },
          )
          .then(() => seen.push(committed.get(`m${i}`) === 1)),
      ),
    );
    const after = store.writeStats;
    expect(seen).toEqual(Array(100).fill(true));
    expect(after.operations - before.operations).toBe(100);
    expect(after.transactions - before.transactions).toBeLessThanOrEqual(2);
    // The store opens its file with synchronous=NORMAL: every transaction is fsynced after COMMIT.
    expect(after.synced - before.synced).toBe(after.transactions - before.transactions);
    reader.close();
    await store.close();
  });

  it('commits concurrent publishes the same way', async () => {
    const store = SqliteStore.open({ path: path(), box: { directory: false, strangerBits: 0 } });
    const [alice, bob] = [party(), party()];
    await store.box.putAllow(bob.key, [alice.key]);
    const events = await Promise.all(Array.from({ length: 100 }, () => event(alice, bob)));
    const before = store.writeStats.transactions;
    const results = await Promise.all(events.map((e) => store.box.publish(e)));
    expect(results.map((r) => (r.status === 'stored' ? r.seq : 0))).toEqual(events.map((_, i) => i + 1));
    expect(store.writeStats.transactions - before).toBeLessThanOrEqual(2);
    await store.close();
    await store.close();
  });
});

describe('SqliteStore crash safety', () => {
  it('keeps every acknowledged append when the process is killed with SIGKILL mid-stream', async () => {
    const file = path();
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const script = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
    const child = spawn(
      process.execPath,
      ['--conditions=@wmp/source', '--import', 'tsx', script, file, 'did:key:bob'],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const acknowledged: string[] = [];
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    let buffered = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      acknowledged.push(...lines);
      if (acknowledged.length >= 3000) child.kill('SIGKILL');
    });
    expect(await exited, stderr).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(3000);

    const store = SqliteStore.open({ path: file });
    const ids: string[] = [];
    for (let cursor = 0, more = true; more; ) {
      const page = await store.queue.after('did:key:bob', cursor, 500);
      ids.push(...page.messages.map((m) => m.id));
      ({ next: cursor, more } = page);
    }
    const stored = new Set(ids);
    expect(stored.size).toBe(ids.length);
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    // Appends were queued in id order and committed in that order: the stored ids are a prefix.
    expect(ids).toEqual(ids.map((_, i) => `m${i}`));
    expect(await store.queue.stats('did:key:bob')).toMatchObject({ count: ids.length });
    await store.close();
  });
});
