import type { Totals } from '../storage/contracts/totals.js';

/** What the gauges read when `/metrics` is scraped (the counters are kept here). */
export interface GaugeSources {
  connections(): number;
  sessions(): number | undefined;
  registered(): number;
  queue(): Promise<Totals>;
}

/** Counters of the relay; rendered as Prometheus text (exposition format 0.0.4). */
export class RelayMetrics {
  /** Messages accepted for routing (one per deliver, whatever the number of recipients). */
  routed = 0;
  /** Messages forwarded to a live connection (one per connection). */
  deliveries = 0;
  readonly statuses = new Map<string, number>();
  readonly errors = new Map<number, number>();

  status(status: string): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  error(code: number): void {
    this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
  }

  async render(gauges: GaugeSources): Promise<string> {
    const queue = await gauges.queue();
    const lines: string[] = [];
    const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[string, number]>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    metric('wmp_relay_connections', 'gauge', 'Open WebSocket connections and HTTP sessions.', [
      ['', gauges.connections()],
    ]);
    const sessions = gauges.sessions();
    if (sessions !== undefined) metric('wmp_relay_sessions', 'gauge', 'Sessions held by the relay.', [['', sessions]]);
    metric('wmp_relay_registered_connections', 'gauge', 'Connections registered for an identity.', [
      ['', gauges.registered()],
    ]);
    metric('wmp_relay_queued_messages', 'gauge', 'Messages in the offline queues.', [['', queue.count]]);
    metric('wmp_relay_queued_bytes', 'gauge', 'Bytes in the offline queues.', [['', queue.bytes]]);
    metric('wmp_relay_routed_total', 'counter', 'Messages accepted for routing.', [['', this.routed]]);
    metric('wmp_relay_deliveries_total', 'counter', 'Messages forwarded to a live connection.', [
      ['', this.deliveries],
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
    return `${lines.join('\n')}\n`;
  }
}
