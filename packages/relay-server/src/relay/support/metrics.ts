import type { SessionCounts } from '@wmp/session';
import type { ByteBudget } from '@wmp/transports';
import type { Totals } from '../../storage/contracts/totals.js';

/** What the gauges read when `/metrics` is scraped (the counters are kept here). */
export interface GaugeSources {
  connections(): number;
  /** Of those, connections with no authenticated session. */
  unauthenticated(): number;
  sessions(): Promise<SessionCounts>;
  registered(): number;
  queue(): Promise<Totals>;
  /** The shared memory budgets by name (outbound, replay, bodies). */
  budgets(): Readonly<Record<string, ByteBudget>>;
  /** Times a source address was over its read rate and made to wait. */
  readWaits(): number;
  /** Refusals by cause (the refusal log's totals). */
  refusals(): ReadonlyMap<string, number>;
  /** This node's id (one relay of a cluster is several nodes, each scraped on its own). */
  nodeId(): string;
  /** Whether the coordination (Redis, on a cluster) answers. */
  coordinationUp(): boolean;
  /** A cluster node's session cache (its copies, and reads answered from one or from the store). */
  sessionCache(): { readonly size: number; readonly hits: number; readonly misses: number } | undefined;
}

/** A Prometheus label value: backslash, quote and newline escaped. */
function labelValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Counters of the relay; rendered as Prometheus text (exposition format 0.0.4). */
export class RelayMetrics {
  /** Messages accepted for routing (one per deliver, whatever the number of recipients). */
  routed = 0;
  /** Messages forwarded to a live connection (one per connection). */
  deliveries = 0;
  /** Sessions routed end to end through this relay: opened, ended, and their frames passed on. */
  routedOpened = 0;
  routedClosed = 0;
  routedFrames = 0;
  readonly statuses = new Map<string, number>();
  readonly errors = new Map<number, number>();
  /** Evidence records made here, by event type. */
  readonly evidence = new Map<string, number>();
  /** Evidence records that went without a timestamp token: the TSA failed. */
  tsaFailures = 0;

  evidenceRecord(eventType: string): void {
    this.evidence.set(eventType, (this.evidence.get(eventType) ?? 0) + 1);
  }

  status(status: string): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  error(code: number): void {
    this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
  }

  async render(gauges: GaugeSources): Promise<string> {
    const [queue, sessions] = await Promise.all([gauges.queue(), gauges.sessions()]);
    const lines: string[] = [];
    const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[string, number]>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    // The node as an info metric: the other series stay unlabelled (a scrape is one node's), and a
    // query joins on it to tell the nodes apart. Queue and session gauges are the shared store's.
    metric('wmp_relay_node_info', 'gauge', 'This node of the relay (1).', [
      [`{node_id="${labelValue(gauges.nodeId())}"}`, 1],
    ]);
    metric('wmp_relay_coordination_up', 'gauge', 'Whether the coordination backend answers (1) or not (0).', [
      ['', gauges.coordinationUp() ? 1 : 0],
    ]);
    metric('wmp_relay_connections', 'gauge', 'Open WebSocket connections and HTTP sessions.', [
      ['', gauges.connections()],
    ]);
    metric('wmp_relay_unauthenticated_connections', 'gauge', 'Open connections with no authenticated session.', [
      ['', gauges.unauthenticated()],
    ]);
    metric('wmp_relay_sessions', 'gauge', 'Sessions held by the relay (all nodes: the shared store).', [
      ['', sessions.sessions],
    ]);
    metric('wmp_relay_pending_sessions', 'gauge', 'Unauthenticated sessions held by the relay.', [
      ['', sessions.pending],
    ]);
    metric('wmp_relay_registered_connections', 'gauge', 'Connections registered for an identity.', [
      ['', gauges.registered()],
    ]);
    metric('wmp_relay_queued_messages', 'gauge', 'Messages in the offline queues (all nodes).', [['', queue.count]]);
    metric('wmp_relay_queued_bytes', 'gauge', 'Bytes in the offline queues (all nodes).', [['', queue.bytes]]);
    metric('wmp_relay_routed_total', 'counter', 'Messages accepted for routing.', [['', this.routed]]);
    metric('wmp_relay_deliveries_total', 'counter', 'Messages forwarded to a live connection.', [
      ['', this.deliveries],
    ]);
    metric('wmp_relay_routed_sessions_opened_total', 'counter', 'Sessions routed end to end that were opened.', [
      ['', this.routedOpened],
    ]);
    metric('wmp_relay_routed_sessions_closed_total', 'counter', 'Sessions routed end to end that ended.', [
      ['', this.routedClosed],
    ]);
    metric('wmp_relay_routed_frames_total', 'counter', 'Frames of routed sessions passed between the parties.', [
      ['', this.routedFrames],
    ]);
    metric(
      'wmp_relay_statuses_total',
      'counter',
      'wmp.message.status notifications by status.',
      [...this.statuses].map(([s, n]) => [`{status="${s}"}`, n]),
    );
    metric(
      'wmp_relay_errors_total',
      'counter',
      'JSON-RPC error answers by code.',
      [...this.errors].map(([c, n]) => [`{code="${c}"}`, n]),
    );
    metric(
      'wmp_relay_evidence_records_total',
      'counter',
      'Evidence records this node made, by event type.',
      [...this.evidence].map(([e, n]) => [`{event="${e}"}`, n]),
    );
    metric('wmp_relay_evidence_tsa_failures_total', 'counter', 'Evidence records made without a timestamp token.', [
      ['', this.tsaFailures],
    ]);
    metric(
      'wmp_relay_refusals_total',
      'counter',
      'Requests and connections refused by a limit, by cause.',
      [...gauges.refusals()].map(([cause, n]) => [`{cause="${cause}"}`, n]),
    );
    const budgets = Object.entries(gauges.budgets());
    metric(
      'wmp_relay_budget_used_bytes',
      'gauge',
      'Memory held under each shared budget.',
      budgets.map(([name, b]) => [`{budget="${name}"}`, b.used]),
    );
    metric(
      'wmp_relay_budget_limit_bytes',
      'gauge',
      'The size of each shared budget.',
      budgets.map(([name, b]) => [`{budget="${name}"}`, b.limit]),
    );
    metric(
      'wmp_relay_budget_refusals_total',
      'counter',
      'Reservations refused by each shared budget.',
      budgets.map(([name, b]) => [`{budget="${name}"}`, b.refusals]),
    );
    metric(
      'wmp_relay_source_read_waits_total',
      'counter',
      'Times a source address was read faster than its rate and made to wait.',
      [['', gauges.readWaits()]],
    );
    // Only a cluster node keeps copies (a single process reads its own store): zeros otherwise.
    const cache = gauges.sessionCache() ?? { size: 0, hits: 0, misses: 0 };
    metric('wmp_relay_session_cache_entries', 'gauge', 'Session records this node keeps copies of.', [
      ['', cache.size],
    ]);
    metric('wmp_relay_session_cache_reads_total', 'counter', 'Session reads through the cache, by where answered.', [
      ['{from="copy"}', cache.hits],
      ['{from="store"}', cache.misses],
    ]);
    metric('process_resident_memory_bytes', 'gauge', 'Resident memory of the relay process.', [['', residentBytes()]]);
    return `${lines.join('\n')}\n`;
  }
}

/** The process RSS where the runtime tells it (Node), else 0. */
function residentBytes(): number {
  const p = (globalThis as { process?: { memoryUsage?: { rss?: () => number } } }).process;
  return p?.memoryUsage?.rss?.() ?? 0;
}
