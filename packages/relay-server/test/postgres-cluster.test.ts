import { resumeWith, type SessionRecord, tokenHash } from '@wmp/session';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { gate } from '../../../test-support/gate.js';
import { StoreSchemaError, StoreUnavailableError } from '../src/index.js';
import { PostgresStore, type PostgresStoreOptions, SCHEMA_VERSION } from '../src/postgres.js';
import { freshSchemaUrl } from './support/postgres-schemas.js';

// Several nodes on one database: each a PostgresStore of its own (its own writer connection and
// pool), as separate relay processes would be. What must hold across them.
const HOUR = 3600_000;
const BOB = 'did:key:z6MkBob';
const ALICE = 'did:key:z6MkAlice';
const later = () => ({ expiresAt: Date.now() + HOUR });

const open: PostgresStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** `count` nodes on one fresh schema, and its URL (for more nodes, or a plain connection). */
async function cluster(
  count: number,
  options: Partial<PostgresStoreOptions> = {},
): Promise<{ url: string; nodes: PostgresStore[] }> {
  const url = await freshSchemaUrl();
  return { url, nodes: await Promise.all(Array.from({ length: count }, () => node(url, options))) };
}

async function node(url: string, options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
  const store = await PostgresStore.open({ url, poolSize: 2, ...options });
  open.push(store);
  return store;
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

function session(token: string): SessionRecord {
  const now = Date.now();
  return {
    id: `ses-${Math.random().toString(36).slice(2)}`,
    version: '0.1',
    initiator: ALICE,
    participants: [ALICE, BOB],
    capabilities: {},
    security: { mode: 'tls' },
    state: 'active',
    authenticated: [ALICE],
    challenge: undefined,
    resumptionTokens: [{ hash: tokenHash(token), identity: ALICE }],
    createdAt: now,
    expiresAt: now + HOUR,
  } as SessionRecord;
}

describe('PostgreSQL stores on several nodes', () => {
  it('gives appends to one recipient from two nodes gap-free seqs, in commit order', async () => {
    const { url, nodes } = await cluster(2);
    const [a, b] = nodes as [PostgresStore, PostgresStore];
    const total = 600;
    // A third node follows the queue while the appends commit: every page must start right
    // after its cursor and run on without a hole. A seq that committed after a higher one would
    // show as a page starting past cursor + 1 (the lower one not visible yet), and that message
    // would then never be read at all.
    const reader = await node(url);
    const seen: number[] = [];
    let holes = 0;
    const follow = (async () => {
      let cursor = 0;
      while (seen.length < total) {
        const page = await reader.queue.after(BOB, cursor, 500);
        for (const m of page.messages) {
          if (m.seq !== cursor + 1) holes++;
          seen.push(m.seq);
          cursor = m.seq;
        }
      }
    })();
    const results = await Promise.all(
      Array.from({ length: total }, (_, i) =>
        (i % 2 ? a : b).queue.append(
          BOB,
          { id: `m-${i}`, sender: `did:key:z6MkS${i % 9}`, body: `{"i":${i}}` },
          later(),
        ),
      ),
    );
    expect(results.every((r) => r.status === 'queued')).toBe(true);
    expect(results.map((r) => r.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    await follow;
    expect(holes).toBe(0);
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(await a.queue.stats(BOB)).toMatchObject({ count: total });
    expect(a.writeStats.transactions + b.writeStats.transactions).toBeLessThan(total / 2);
  });

  it('takes no deadlock when two nodes write the same recipients in opposite orders', async () => {
    const { nodes } = await cluster(2);
    const recipients = Array.from({ length: 20 }, (_, i) => `did:key:z6MkR${i}`);
    const rounds = 10;
    const work = nodes.map((store, k) =>
      (async () => {
        for (let round = 0; round < rounds; round++) {
          const order = k === 0 ? recipients : [...recipients].reverse();
          await Promise.all(
            order.flatMap((r) => [
              store.queue.append(r, { id: `${k}-${round}-${r}`, sender: ALICE, body: '{}' }, later()),
              store.queue.ack(r, [`${1 - k}-${round - 1}-${r}`]),
            ]),
          );
        }
      })(),
    );
    await Promise.all(work);
    for (const r of recipients) {
      const page = await nodes[0]!.queue.after(r, undefined, 500);
      // Every seq handed out once, none lost: what is left plus what was acked is all of them.
      expect(new Set(page.messages.map((m) => m.seq)).size).toBe(page.messages.length);
      expect((await nodes[0]!.queue.stats(r)).count).toBe(page.messages.length);
    }
    // No deadlock, and none detected and retried either (that would have cost a second each).
    expect(nodes.map((s) => [s.writeStats.failures, s.writeStats.retries])).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });

  it('keeps queue counts exact while one node appends, another acknowledges and a third sweeps', async () => {
    const { nodes } = await cluster(3);
    const [writer, reader, sweeper] = nodes as [PostgresStore, PostgresStore, PostgresStore];
    const recipients = Array.from({ length: 6 }, (_, i) => `did:key:z6MkQ${i}`);
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      const now = Date.now();
      await Promise.all([
        // Half of each round expires at once: the sweep takes them while acks and appends run.
        ...recipients.flatMap((r) =>
          [0, 1, 2, 3].map((k) =>
            writer.queue.append(
              r,
              { id: `${round}-${k}-${r}`, sender: `did:key:z6MkS${k}`, body: `{"k":${k}}` },
              { expiresAt: k % 2 ? now - 1 : now + HOUR },
            ),
          ),
        ),
        ...recipients.map((r) => reader.queue.ack(r, [`${round - 1}-0-${r}`, `${round - 1}-1-${r}`])),
        ...recipients.map((r) => reader.queue.ackThrough(r, `${round - 2}-2-${r}`)),
        sweeper.queue.sweepExpired(now, 50),
      ]);
    }
    await sweeper.queue.sweepExpired(Date.now(), 1000);
    let total = 0;
    for (const r of recipients) {
      const page = await reader.queue.after(r, undefined, 500);
      const bytes = page.messages.reduce((sum, m) => sum + m.bytes, 0);
      expect(await writer.queue.stats(r)).toEqual({ count: page.messages.length, bytes });
      total += page.messages.length;
    }
    expect((await reader.queue.totals()).count).toBe(total);
    expect(nodes.map((s) => s.writeStats.failures)).toEqual([0, 0, 0]);
  });

  it('marks delivered without waiting for a transaction that holds a message (an ack deleting it)', async () => {
    const { url, nodes } = await cluster(1);
    const store = nodes[0]!;
    const held = (await store.queue.append(BOB, { id: 'held', sender: ALICE, body: '{}' }, later())).seq;
    const free = (await store.queue.append(BOB, { id: 'free', sender: ALICE, body: '{}' }, later())).seq;
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM wmp_messages WHERE recipient = $1 AND seq = $2 FOR UPDATE', [BOB, held]);
      // Not waited for: the row held is left to its holder, the other one is marked.
      expect((await store.queue.markDelivered(BOB, [held, free])).map((m) => m.id)).toEqual(['free']);
      await other.query('ROLLBACK');
    } finally {
      await other.end();
    }
    expect((await store.queue.markDelivered(BOB, [held, free])).map((m) => m.id)).toEqual(['held']);
  });

  it('queues a message id once when two nodes append it at once (a retry on another node)', async () => {
    const { nodes } = await cluster(2);
    for (let i = 0; i < 20; i++) {
      const m = { id: `dup-${i}`, sender: ALICE, body: '{}' };
      const results = await Promise.all(nodes.map((s) => s.queue.append(BOB, m, later())));
      expect(results.map((r) => r.status).sort()).toEqual(['exists', 'queued']);
      expect(results[0]!.seq).toBe(results[1]!.seq);
    }
    expect(await nodes[0]!.queue.stats(BOB)).toMatchObject({ count: 20 });
  });

  it('lets exactly one of two nodes resuming the same token at once win', async () => {
    const { nodes } = await cluster(2);
    const [a, b] = nodes as [PostgresStore, PostgresStore];
    for (let i = 0; i < 20; i++) {
      const token = `rt-${i}-${Math.random()}`;
      const record = session(token);
      await a.sessions.create(record);
      const now = Date.now();
      const uses = [resumeWith(token, ALICE, now), resumeWith(token, ALICE, now)];
      const outcomes = await Promise.allSettled([
        a.sessions.update(record.id, uses[0]!.change),
        b.sessions.update(record.id, uses[1]!.change),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
        code: -31000,
      });
      // The winner's new token is the one stored, on both nodes.
      const winner = uses[outcomes.findIndex((o) => o.status === 'fulfilled')]!.result();
      const stored = await b.sessions.get(record.id);
      expect(stored?.resumptionTokens).toEqual([{ hash: tokenHash(winner.token), identity: ALICE }]);
    }
  });

  it('hands each key package out once to takers on several nodes', async () => {
    const { nodes } = await cluster(3);
    const packages = Array.from({ length: 60 }, (_, i) => ({
      ref: `ref-${i}`,
      keyPackage: `AAEA${i}`,
      cipherSuite: 1,
      expiresAt: Date.now() + HOUR,
    }));
    expect(await nodes[0]!.keyPackages.publish(ALICE, packages, { now: Date.now(), maxPerIdentity: 100 })).toBe(60);
    const taken = await Promise.all(
      Array.from({ length: 75 }, (_, i) => nodes[i % 3]!.keyPackages.take(ALICE, undefined, Date.now())),
    );
    const refs = taken.flatMap((t) => (t ? [t.ref] : []));
    expect(refs).toHaveLength(60);
    expect(new Set(refs).size).toBe(60);
    expect(await nodes[1]!.keyPackages.totals()).toEqual({ count: 0, bytes: 0 });
  });

  it('holds the per-identity key package cap across nodes publishing at once', async () => {
    const { nodes } = await cluster(2);
    let n = 0;
    const batch = () =>
      Array.from({ length: 10 }, () => ({
        ref: `r-${++n}`,
        keyPackage: `AAEA${n}`,
        cipherSuite: 1,
        expiresAt: Date.now() + HOUR,
      }));
    const added = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        nodes[i % 2]!.keyPackages.publish(ALICE, batch(), { now: Date.now(), maxPerIdentity: 25 }),
      ),
    );
    expect(added.reduce((x, y) => x + y, 0)).toBe(25);
    expect(await nodes[0]!.keyPackages.count(ALICE, Date.now())).toBe(25);
  });

  it('advances an MLS group for one of two commits made in one epoch on two nodes', async () => {
    const { nodes } = await cluster(2);
    const [a, b] = nodes as [PostgresStore, PostgresStore];
    await a.groups.create({
      sessionId: 'ses-g',
      groupId: 'Zw',
      cipherSuite: 1,
      epoch: 0,
      expiresAt: Date.now() + HOUR,
    });
    for (let epoch = 0; epoch < 10; epoch++) {
      const results = await Promise.all([
        a.groups.advance('ses-g', epoch, `a-${epoch}`),
        b.groups.advance('ses-g', epoch, `b-${epoch}`),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(['advanced', 'conflict']);
    }
    expect(await b.groups.get('ses-g')).toMatchObject({ epoch: 10 });
  });

  it('migrates once when several nodes start at once, and refuses a schema newer than it knows', async () => {
    const url = await freshSchemaUrl();
    await Promise.all(Array.from({ length: 4 }, () => node(url)));
    const versions = await query<{ version: number }>(url, 'SELECT version FROM wmp_schema_version ORDER BY version');
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    await query(url, "INSERT INTO wmp_schema_version (version, name) VALUES ($1, 'from the future')", [
      SCHEMA_VERSION + 1,
    ]);
    const refused = await PostgresStore.open({ url }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreSchemaError);
    expect(refused).toMatchObject({ code: 'ERR_STORE_SCHEMA' });
  });

  it('lets one node at a time run under a sweep lock', async () => {
    const { nodes } = await cluster(2);
    const [a, b] = nodes as [PostgresStore, PostgresStore];
    const { opened: holding, open: release } = gate();
    const { opened: inside, open: entered } = gate();
    const first = a.withSweepLock('relay', async () => {
      entered();
      await holding;
      return 'a swept';
    });
    await inside;
    expect(await b.withSweepLock('relay', async () => 'b swept')).toEqual({ ran: false });
    // Another name is another lock.
    expect(await b.withSweepLock('box', async () => 'b swept the box')).toEqual({
      ran: true,
      value: 'b swept the box',
    });
    release();
    expect(await first).toEqual({ ran: true, value: 'a swept' });
    expect(await b.withSweepLock('relay', async () => 'b swept')).toEqual({ ran: true, value: 'b swept' });
    // A sweep that throws releases the lock too.
    await expect(a.withSweepLock('relay', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await b.withSweepLock('relay', async () => 1)).toEqual({ ran: true, value: 1 });
  });
});

describe('PostgresStore.open', () => {
  it('refuses a server it cannot use with StoreUnavailableError, naming what is wrong', async () => {
    const url = new URL(await freshSchemaUrl());
    // A port nothing listens on (the server's own port, plus one, is free on a throwaway server).
    const closed = new URL(url);
    const probe = await import('node:net').then(
      (net) =>
        new Promise<number>((resolve) => {
          const server = net.createServer();
          server.listen(0, '127.0.0.1', () => {
            const { port } = server.address() as { port: number };
            server.close(() => resolve(port));
          });
        }),
    );
    closed.port = String(probe);
    const unreachable = await PostgresStore.open({ url: closed.toString(), connectTimeoutMs: 2000 }).catch(
      (e: unknown) => e,
    );
    expect(unreachable).toBeInstanceOf(StoreUnavailableError);
    expect(unreachable).toMatchObject({
      code: 'ERR_STORE_UNAVAILABLE',
      reason: 'unreachable',
      message: 'database unreachable',
    });
    expect(String((unreachable as Error).message)).not.toContain(String(probe));

    const missing = new URL(url);
    missing.pathname = '/no_such_database';
    await expect(PostgresStore.open({ url: missing.toString() })).rejects.toMatchObject({ reason: 'no_database' });

    const stranger = new URL(url);
    stranger.username = 'nobody_here';
    await expect(PostgresStore.open({ url: stranger.toString() })).rejects.toMatchObject({ reason: 'credentials' });
  });
});
