// What each admin command does to a relay's stores, the same whether it runs inside the running
// relay (over the admin socket) or in the admin process on files no relay holds. Dispatch is by
// name through OPERATIONS; each answer is plain JSON (what `--json` prints).
import { closeSync, openSync, unlinkSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import {
  type InventoryPage,
  purgeBox,
  purgeQueue,
  type QueueOverview,
  type RelayStores,
  sweepExpiredCards,
  sweepExpiredEvents,
} from '@wmp/relay-server';
import type { SessionRecord } from '@wmp/session';
import { AdminError } from './admin-errors.js';

/** The outbox of a peer relay is the queue `relay:<origin>` (docs/federation-profile.md). */
const OUTBOX_PREFIX = 'relay:';
/** Most entries of each list one `queues` or `sessions` answer carries. */
export const MAX_LISTED = 10_000;

/** What only a running relay can do (it holds the connections). */
export interface LiveRelay {
  /** Ends a session as `wmp.session.close` would, telling its connections; false when there is none. */
  closeSession(id: string): Promise<boolean>;
  /** One run of the relay's own sweeper (expired messages get their `expired` statuses). */
  sweep(): Promise<void>;
}

export interface AdminTarget {
  readonly stores: RelayStores;
  /** A consistent copy of the database into a new file (SQLite), else undefined. */
  readonly backup?: (file: string) => Promise<void>;
  readonly live?: LiveRelay;
  readonly now?: () => number;
  /** What `status` says besides whether a relay runs (its id, version, store). */
  readonly info?: Readonly<Record<string, unknown>>;
}

type Args = Readonly<Record<string, unknown>>;
export type Operation = (target: AdminTarget, args: Args) => Promise<unknown>;

function inventoryOf(target: AdminTarget) {
  const inventory = target.stores.inventory;
  if (inventory === undefined) throw new AdminError('failed', 'this store cannot list its contents');
  return inventory;
}

/** Every page of one list, up to MAX_LISTED entries. */
async function collect<T>(read: (after: string | undefined) => Promise<InventoryPage<T>>) {
  const items: T[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await read(after);
    items.push(...page.items);
    if (page.next === undefined) return { items, truncated: false };
    if (items.length >= MAX_LISTED) return { items: items.slice(0, MAX_LISTED), truncated: true };
    after = page.next;
  }
}

function described(overview: QueueOverview, now: number) {
  const { recipient, count, bytes, oldestAt } = overview;
  return {
    key: recipient,
    count,
    bytes,
    oldest_at: oldestAt === undefined ? null : new Date(oldestAt).toISOString(),
    oldest_age_seconds: oldestAt === undefined ? null : Math.max(0, Math.floor((now - oldestAt) / 1000)),
  };
}

function sessionDescribed(session: SessionRecord) {
  return {
    id: session.id,
    state: session.state,
    initiator: session.initiator ?? null,
    participants: session.participants.length,
    authenticated: [...session.authenticated],
    created_at: new Date(session.createdAt).toISOString(),
    expires_at: new Date(session.expiresAt).toISOString(),
  };
}

function stringArg(args: Args, name: string): string | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) {
    throw new AdminError('usage', `--${name} needs a value`);
  }
  return value;
}

async function queues(target: AdminTarget) {
  const inventory = inventoryOf(target);
  const now = (target.now ?? Date.now)();
  const queued = await collect((after) => inventory.queues(after, 500));
  const boxes = await collect((after) => inventory.boxes(after, 500));
  const isOutbox = (q: QueueOverview) => q.recipient.startsWith(OUTBOX_PREFIX);
  return {
    queues: queued.items.filter((q) => !isOutbox(q)).map((q) => described(q, now)),
    outboxes: queued.items.filter(isOutbox).map((q) => ({
      ...described(q, now),
      peer: q.recipient.slice(OUTBOX_PREFIX.length),
    })),
    boxes: boxes.items.map((b) => described(b, now)),
    truncated: queued.truncated || boxes.truncated,
  };
}

/** Every expired row: messages (with their statuses when the relay runs), events, cards, sessions, MLS state. */
async function purgeExpired(target: AdminTarget) {
  const { stores } = target;
  const before = await stores.queue.totals();
  const sessionsBefore = (await stores.sessions.counts()).sessions;
  if (target.live) await target.live.sweep();
  else {
    const now = (target.now ?? Date.now)();
    while ((await stores.queue.sweepExpired(now, 1000)).length === 1000) {}
    await stores.sessions.sweep(now);
    while ((await stores.groups.sweepExpired(now, 1000)) === 1000) {}
    while ((await stores.keyPackages.sweepExpired(now, 1000)) === 1000) {}
  }
  const events = await sweepExpiredEvents(stores.box);
  const cards = await sweepExpiredCards(stores.box);
  const after = await stores.queue.totals();
  return {
    purged: 'expired',
    messages: Math.max(0, before.count - after.count),
    sessions: Math.max(0, sessionsBefore - (await stores.sessions.counts()).sessions),
    events,
    cards,
  };
}

async function purge(target: AdminTarget, args: Args) {
  const recipient = stringArg(args, 'recipient');
  const outbox = stringArg(args, 'outbox');
  const box = stringArg(args, 'box');
  const expired = args.expired === true;
  const chosen = [recipient, outbox, box].filter((v) => v !== undefined).length + (expired ? 1 : 0);
  if (chosen !== 1) throw new AdminError('usage', 'purge takes one of --recipient, --outbox, --box, --expired');
  if (expired) return purgeExpired(target);
  if (box !== undefined) return { purged: 'box', key: box, removed: await purgeBox(target.stores.box, box) };
  const key = recipient ?? `${OUTBOX_PREFIX}${outbox!.replace(/\/+$/, '')}`;
  if (recipient?.startsWith(OUTBOX_PREFIX)) throw new AdminError('usage', 'an outbox is purged with --outbox <origin>');
  const removed = await purgeQueue(target.stores.queue, key);
  return { purged: recipient === undefined ? 'outbox' : 'queue', key, removed: removed.length };
}

async function sessions(target: AdminTarget, args: Args) {
  const close = stringArg(args, 'close');
  if (close === undefined) {
    const inventory = inventoryOf(target);
    const listed = await collect((after) => inventory.sessions(after, 500));
    return { sessions: listed.items.map(sessionDescribed), truncated: listed.truncated };
  }
  if (target.live) {
    if (!(await target.live.closeSession(close))) throw new AdminError('not_found', 'no session with this id');
  } else {
    if ((await target.stores.sessions.get(close)) === undefined) {
      throw new AdminError('not_found', 'no session with this id');
    }
    await target.stores.sessions.delete(close);
  }
  return { closed: close };
}

async function backup(target: AdminTarget, args: Args) {
  const file = stringArg(args, 'to');
  if (file === undefined || !isAbsolute(file)) throw new AdminError('usage', 'backup needs --to FILE');
  if (target.backup === undefined) {
    throw new AdminError('usage', 'a cluster is backed up with pg_dump (see docs/operations.md)');
  }
  // A new file, readable by this user only (it holds sessions and queued messages).
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new AdminError('conflict', `${file} exists: give a new file`);
    throw new AdminError('failed', `cannot create ${file} (${code ?? 'error'})`);
  }
  try {
    await target.backup(file);
  } catch (error) {
    unlinkSync(file);
    throw error;
  }
  return { backup: file };
}

/** The operations a running relay answers on its admin socket, by command name. */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  status: async (target) => ({ running: target.live !== undefined, ...target.info }),
  queues,
  purge,
  sessions,
  backup,
};
