import { utf8Length } from '@wmp/jsonrpc-envelope';
import { checkCase, checkEntry, checkQuery, cursorOf } from '../contracts/evidence-input.js';
import {
  checkEvidenceLimits,
  type EvidenceCase,
  type EvidenceEntry,
  type EvidenceLimits,
  type EvidenceOverview,
  type EvidencePage,
  type EvidenceQuery,
  type EvidenceStore,
} from '../contracts/evidence-store.js';
import { clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import type { Totals } from '../contracts/totals.js';
import { StoreClosedError } from '../errors.js';

interface Held {
  readonly position: number;
  readonly entry: EvidenceEntry;
  readonly bytes: number;
}

/**
 * The evidence repository in memory (tests, `--ephemeral` relays); the same behaviour as the
 * SQLite and PostgreSQL adapters. No call awaits inside, so each one is atomic.
 */
export class MemoryEvidenceStore implements EvidenceStore {
  readonly limits: EvidenceLimits;
  /** By id, in the order stored (a Map keeps insertion order). */
  readonly #entries = new Map<string, Held>();
  readonly #cases = new Map<string, EvidenceCase>();
  #position = 0;
  #bytes = 0;
  #closed = false;

  constructor(limits: Partial<EvidenceLimits> = {}) {
    this.limits = checkEvidenceLimits(limits);
  }

  async open(evidenceCase: EvidenceCase): Promise<'opened' | 'exists'> {
    this.#open();
    const c = checkCase(evidenceCase);
    const key = caseKey(c.messageId, c.sender);
    if (this.#cases.has(key)) return 'exists';
    this.#cases.set(key, c);
    return 'opened';
  }

  async caseOf(messageId: string, sender: string): Promise<EvidenceCase | undefined> {
    this.#open();
    const c = this.#cases.get(caseKey(messageId, sender));
    return c && { ...c, recipients: [...c.recipients], eventTypes: [...c.eventTypes] };
  }

  async add(entry: EvidenceEntry): Promise<'stored' | 'exists' | 'full'> {
    this.#open();
    const e = checkEntry(entry);
    if (this.#entries.has(e.id)) return 'exists';
    if (this.#entries.size >= this.limits.maxRecords) return 'full';
    this.#insert(e);
    return 'stored';
  }

  async get(id: string): Promise<EvidenceEntry | undefined> {
    this.#open();
    const held = this.#entries.get(id);
    return held && copy(held.entry);
  }

  async find(query: EvidenceQuery, party: string, cursor: string | undefined, limit: number): Promise<EvidencePage> {
    this.#open();
    const q = checkQuery(query, party);
    const after = cursorOf(cursor);
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const selected = [...this.#entries.values()].filter(({ entry }) => {
      if (!entry.parties.includes(party)) return false;
      if ('messageId' in q) return entry.messageId === q.messageId;
      return entry.sessionId === q.sessionId && entry.eventTime >= q.since && entry.eventTime <= q.until;
    });
    const rest = selected.filter((h) => h.position > after);
    const page = rest.slice(0, n);
    return {
      entries: page.map((h) => copy(h.entry)),
      total: selected.length,
      next: rest.length > n ? String(page.at(-1)!.position) : undefined,
    };
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    let removed = 0;
    for (const [id, held] of this.#entries) {
      if (removed === n) return removed;
      if (held.entry.expiresAt > now) continue;
      this.#entries.delete(id);
      this.#bytes -= held.bytes;
      removed++;
    }
    for (const [key, c] of this.#cases) {
      if (removed === n) return removed;
      if (c.expiresAt > now) continue;
      this.#cases.delete(key);
      removed++;
    }
    return removed;
  }

  async totals(): Promise<Totals> {
    this.#open();
    return { count: this.#entries.size, bytes: this.#bytes };
  }

  async overview(): Promise<EvidenceOverview> {
    this.#open();
    let oldest: number | undefined;
    for (const { entry } of this.#entries.values())
      if (oldest === undefined || entry.eventTime < oldest) oldest = entry.eventTime;
    return { records: this.#entries.size, bytes: this.#bytes, cases: this.#cases.size, oldestAt: oldest };
  }

  close(): void {
    this.#closed = true;
  }

  #insert(entry: EvidenceEntry): void {
    const bytes = utf8Length(entry.body);
    this.#entries.set(entry.id, { position: ++this.#position, entry, bytes });
    this.#bytes += bytes;
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError();
  }
}

/** A case's key: message id and sender (two senders may choose the same message id). */
function caseKey(messageId: string, sender: string): string {
  return JSON.stringify([messageId, sender]);
}

function copy(entry: EvidenceEntry): EvidenceEntry {
  return { ...entry, parties: [...entry.parties] };
}
