// The box's figures for the relay's /metrics: requests by route and status, refusals by code
// (counters of this process), and the store's totals (gauges: the shared store's on a cluster).
import type { BoxStore } from '../storage/contracts/box-store.js';

/** The route names the counters use (stable: dashboards and alert rules name them). */
export type BoxRoute =
  | 'limits'
  | 'publish'
  | 'fetch'
  | 'stream'
  | 'delivered'
  | 'allow_put'
  | 'allow_get'
  | 'cards'
  | 'cards_lookup'
  | 'other';

/** A Prometheus label value: backslash, quote and newline escaped. */
function label(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export class BoxMetrics {
  /** `route status` -> count. */
  readonly #requests = new Map<string, number>();
  readonly #refusals = new Map<string, number>();

  request(route: BoxRoute, status: number): void {
    const key = `${route} ${status}`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  refused(code: string): void {
    this.#refusals.set(code, (this.#refusals.get(code) ?? 0) + 1);
  }

  /** Prometheus text (exposition format 0.0.4), to append to the relay's own. */
  async render(store: BoxStore, openStreams: number): Promise<string> {
    const [totals, cards] = await Promise.all([store.totals(), store.limits.directory ? store.cardCount() : 0]);
    const lines: string[] = [];
    const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[string, number]>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    metric(
      'wmp_relay_box_requests_total',
      'counter',
      'Box API requests by route and HTTP status.',
      [...this.#requests].map(([key, n]) => {
        const [route, status] = key.split(' ');
        return [`{route="${label(route!)}",status="${status}"}`, n];
      }),
    );
    metric(
      'wmp_relay_box_refusals_total',
      'counter',
      'Box API error answers by code.',
      [...this.#refusals].map(([code, n]) => [`{code="${label(code)}"}`, n]),
    );
    metric('wmp_relay_box_events', 'gauge', 'Undelivered sealed events in the box.', [['', totals.count]]);
    metric('wmp_relay_box_bytes', 'gauge', 'Bytes of undelivered sealed events in the box.', [['', totals.bytes]]);
    metric('wmp_relay_box_limit_bytes', 'gauge', 'The box capacity (--box-bytes).', [['', store.limits.boxBytes]]);
    metric('wmp_relay_box_cards', 'gauge', 'Cards in the directory.', [['', cards]]);
    metric('wmp_relay_box_streams', 'gauge', 'Open event streams of this process.', [['', openStreams]]);
    return `${lines.join('\n')}\n`;
  }
}
