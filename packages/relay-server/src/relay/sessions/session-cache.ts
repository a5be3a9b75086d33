// A node's copies of session records (docs/architecture.md "Cluster", docs/decisions/0660): every
// request reads its session, and on a cluster that read is a PostgreSQL round trip. The copies are
// kept only while this node hears the other nodes' changes, and only of sessions that are active
// well within their lifetime; every write goes to the store as before (one atomic operation there)
// and then tells every node to drop its copy, before the write resolves.
import { isExpired, type SessionChange, type SessionRecord, type SessionStore } from '@wmp/session';
import type { Coordination } from '../../coordination/contracts/coordination.js';
import type { WakeUnsubscribe } from '../../coordination/contracts/wake-ups.js';
import { isSessionId } from './session-ended-notes.js';

/** The `Coordination.broadcast` topic of session changes. */
export const SESSION_CHANGES_TOPIC = 'sessions';

/** Most ids one change note names (a note with more is cut short: its writer sends more notes). */
const MAX_IDS_PER_NOTE = 100;

/**
 * How long a write waits for the other nodes to say they dropped their copies. A node that says
 * nothing by then (stalled, cut off from Redis) serves its copy for at most `maxAgeMs`.
 */
export const SESSION_CHANGE_ACK_MS = 250;

/** The topic on which node `nodeId` hears that the others dropped what its note named. */
export const sessionChangeAcksTopic = (nodeId: string) => `sessions-ack:${nodeId}`;

export interface SessionCacheLimits {
  /** Records kept at most. */
  readonly maxEntries: number;
  /** Characters of the records kept (as JSON), at most. */
  readonly maxChars: number;
  /** A copy is served at most this long after it was read (the bound on a change note that was lost). */
  readonly maxAgeMs: number;
}

interface Entry {
  readonly record: SessionRecord;
  readonly readAt: number;
  readonly chars: number;
}

/** A read in flight: `stale` once a change of its id was heard after it started (its answer is not kept). */
interface Read {
  readonly promise: Promise<SessionRecord | undefined>;
  stale: boolean;
}

/** Who wrote a change note and its number there: the receivers answer it on the writer's acks topic. */
export interface ChangeNoteSender {
  readonly from: string;
  readonly n: number;
}

/** The note that says `ids` changed (`sender`: answer it). */
export function sessionChangesNote(ids: readonly string[], sender?: ChangeNoteSender): string {
  return JSON.stringify(sender === undefined ? { changed: ids } : { changed: ids, ...sender });
}

/** What a change note says: the ids (valid ones only; at most `MAX_IDS_PER_NOTE`) and whom to answer. */
export function sessionChangesOf(note: string): { ids: string[]; sender: ChangeNoteSender | undefined } {
  try {
    const { changed, from, n } = JSON.parse(note) as { changed?: unknown; from?: unknown; n?: unknown };
    const ids = Array.isArray(changed)
      ? changed.slice(0, MAX_IDS_PER_NOTE).filter((id): id is string => isSessionId(id))
      : [];
    const answered = typeof from === 'string' && from.length <= 200 && Number.isSafeInteger(n);
    return { ids, sender: answered ? { from, n: n as number } : undefined };
  } catch {
    return { ids: [], sender: undefined };
  }
}

/** A write's note waiting for the other nodes' answers. */
interface AckWait {
  heard: number;
  wanted: number;
  done: () => void;
}

/**
 * A `SessionStore` that keeps this node's copies of the records it reads, for a node of a cluster
 * whose store is shared. A copy is served only while (1) this node's coordination is healthy and
 * its subscription to the change notes is live, (2) it is younger than `maxAgeMs` and (3) its
 * session is active and not within `maxAgeMs` of expiring; else the store is read. A refusal is
 * thus never decided on an old copy (a closed, expired or missing session is read again). Every
 * outage of the coordination drops every copy, as does every reconnect (notes sent meanwhile are
 * lost). Writes are the store's own atomic operations; after each (whatever its outcome) this
 * node drops its copy, and every other node is told to, before the write resolves.
 */
export class CachedSessionStore implements SessionStore {
  readonly #store: SessionStore;
  readonly #coordination: Pick<Coordination, 'broadcast' | 'health' | 'onHealth' | 'nodeId'>;
  readonly #limits: SessionCacheLimits;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #reads = new Map<string, Read>();
  #chars = 0;
  /** Bumped by every drop of all copies: a read that started before is not kept. */
  #generation = 0;
  #unsubscribe: WakeUnsubscribe | undefined;
  readonly #off: (() => void)[] = [];
  /** This node's change notes by number, until the other nodes answered them or the wait ended. */
  readonly #acks = new Map<number, AckWait>();
  #notes = 0;
  /** Reads answered from a copy, and reads that went to the store (for metrics and tests). */
  hits = 0;
  misses = 0;

  constructor(
    store: SessionStore,
    coordination: Pick<Coordination, 'broadcast' | 'health' | 'onHealth' | 'nodeId'>,
    limits: SessionCacheLimits,
    now: () => number = Date.now,
  ) {
    for (const [k, v] of Object.entries(limits)) {
      if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer`);
    }
    this.#store = store;
    this.#coordination = coordination;
    this.#limits = limits;
    this.#now = now;
  }

  get limits() {
    return this.#store.limits;
  }

  /** Records held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Listens to the change notes; until it resolves (and whenever they are not heard) nothing is kept. */
  async start(): Promise<void> {
    if (this.#unsubscribe !== undefined) return;
    const { broadcast } = this.#coordination;
    this.#off.push(
      this.#coordination.onHealth(() => this.#dropAll()),
      broadcast.onReconnect(() => this.#dropAll()),
    );
    const acks = await broadcast.subscribe(sessionChangeAcksTopic(this.#coordination.nodeId), (_seq, note) => {
      const wait = note === undefined ? undefined : this.#acks.get(Number(note));
      if (wait !== undefined && ++wait.heard >= wait.wanted) wait.done();
    });
    if (acks !== undefined) this.#off.push(acks);
    const unsubscribe = await broadcast.subscribe(SESSION_CHANGES_TOPIC, (_seq, note) => {
      if (note === undefined) return;
      const { ids, sender } = sessionChangesOf(note);
      for (const id of ids) this.#drop(id);
      // Said once the copies are gone: the writer resolves its write only then (or after a wait).
      if (sender !== undefined) void broadcast.notify(sessionChangeAcksTopic(sender.from), String(sender.n));
    });
    this.#unsubscribe = unsubscribe ?? (() => {});
    this.#dropAll();
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const off of this.#off.splice(0)) off();
    for (const wait of this.#acks.values()) wait.done();
    this.#dropAll();
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const now = this.#now();
    const entry = this.#entries.get(id);
    if (entry !== undefined) {
      if (this.#live() && now - entry.readAt < this.#limits.maxAgeMs && this.#servable(entry.record, now)) {
        this.hits++;
        return entry.record;
      }
      this.#remove(id, entry);
    }
    this.misses++;
    const pending = this.#reads.get(id);
    if (pending !== undefined) return pending.promise;
    const generation = this.#generation;
    const read: Read = { promise: this.#store.get(id), stale: false };
    this.#reads.set(id, read);
    try {
      const record = await read.promise;
      if (!read.stale && generation === this.#generation && record !== undefined) this.#keep(record, now);
      return record;
    } finally {
      if (this.#reads.get(id) === read) this.#reads.delete(id);
    }
  }

  async create(session: SessionRecord): Promise<void> {
    try {
      await this.#store.create(session);
    } finally {
      await this.#changed(session.id);
    }
  }

  async update(id: string, change: SessionChange): Promise<SessionRecord | undefined> {
    try {
      return await this.#store.update(id, change);
    } finally {
      await this.#changed(id);
    }
  }

  async delete(id: string): Promise<void> {
    try {
      await this.#store.delete(id);
    } finally {
      await this.#changed(id);
    }
  }

  /** What a sweep removes had expired: no copy of it is served (see `#servable`), none need go. */
  sweep(now: number): Promise<number> {
    return this.#store.sweep(now);
  }

  counts() {
    return this.#store.counts();
  }

  /**
   * `id` was written here: this node's copy goes, and the write resolves once every other node that
   * heard the note said its copy went (a request a client sends after it saw the write answered
   * finds no copy on any node), or after `SESSION_CHANGE_ACK_MS`.
   */
  async #changed(id: string): Promise<void> {
    this.#drop(id);
    const n = ++this.#notes;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const answered = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#acks.delete(n);
        resolve();
      };
      this.#acks.set(n, { heard: 0, wanted: Number.POSITIVE_INFINITY, done });
      timer = setTimeout(done, SESSION_CHANGE_ACK_MS);
      timer.unref?.();
    });
    const note = sessionChangesNote([id], { from: this.#coordination.nodeId, n });
    const reached = await this.#coordination.broadcast.notify(SESSION_CHANGES_TOPIC, note);
    const wait = this.#acks.get(n);
    if (wait !== undefined) {
      wait.wanted = reached;
      if (wait.heard >= reached) wait.done();
    }
    await answered;
  }

  /** Whether copies may be served now: the change notes are heard. */
  #live(): boolean {
    return this.#unsubscribe !== undefined && this.#coordination.health() === 'ok' && this.#heard();
  }

  #heard(): boolean {
    return this.#coordination.broadcast.listening(SESSION_CHANGES_TOPIC);
  }

  /** Active, and not expiring while a copy of it may be served. */
  #servable(record: SessionRecord, now: number): boolean {
    return record.state === 'active' && !isExpired(record, now + this.#limits.maxAgeMs);
  }

  #keep(record: SessionRecord, readAt: number): void {
    if (!this.#live() || !this.#servable(record, this.#now())) return;
    const chars = JSON.stringify(record).length;
    if (chars > this.#limits.maxChars) return;
    const old = this.#entries.get(record.id);
    if (old !== undefined) this.#remove(record.id, old);
    this.#entries.set(record.id, { record, readAt, chars });
    this.#chars += chars;
    // The oldest copies go first (Map order is insertion order).
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.#limits.maxEntries && this.#chars <= this.#limits.maxChars) break;
      this.#remove(oldest, entry);
    }
  }

  #remove(id: string, entry: Entry): void {
    this.#entries.delete(id);
    this.#chars -= entry.chars;
  }

  #drop(id: string): void {
    const entry = this.#entries.get(id);
    if (entry !== undefined) this.#remove(id, entry);
    const read = this.#reads.get(id);
    if (read !== undefined) {
      read.stale = true;
      this.#reads.delete(id);
    }
  }

  #dropAll(): void {
    this.#generation++;
    this.#entries.clear();
    this.#chars = 0;
    for (const read of this.#reads.values()) read.stale = true;
    this.#reads.clear();
  }
}
