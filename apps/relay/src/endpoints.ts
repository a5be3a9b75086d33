// What wmp-relay adds to the relay library's /health and /metrics: its version (`version` in
// /health, `wmp_relay_build_info{version}` in /metrics) and the OHAN box's metrics, which the
// app mounts. The library's routes are registered when the relay is made, before the app can add
// any, so the app wraps the relay's fetch (the function `listen()` serves) for these two paths.
import type { Relay } from '@wmp/relay-server/node';

export interface EndpointExtras {
  readonly version: string;
  /** The box's Prometheus text, when the box is up. */
  readonly boxMetrics: () => Promise<string>;
}

function label(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Call before `relay.listen()`. */
export function extendEndpoints(relay: Relay, extras: EndpointExtras): void {
  const app = relay.app;
  const inner = app.fetch.bind(app);
  const buildInfo = [
    '# HELP wmp_relay_build_info The wmp-relay version of this node (1).',
    '# TYPE wmp_relay_build_info gauge',
    `wmp_relay_build_info{version="${label(extras.version)}"} 1`,
    '',
  ].join('\n');
  app.fetch = async (request, ...rest) => {
    const response = await inner(request, ...rest);
    if (request.method !== 'GET') return response;
    const path = new URL(request.url).pathname;
    if (path === '/health' && response.headers.get('content-type')?.startsWith('application/json')) {
      const body = (await response.json()) as Record<string, unknown>;
      return Response.json(
        { ...body, version: extras.version },
        { status: response.status, headers: response.headers },
      );
    }
    if (path === '/metrics' && response.ok) {
      const text = `${await response.text()}${buildInfo}${await extras.boxMetrics()}`;
      return new Response(text, { status: response.status, headers: response.headers });
    }
    return response;
  };
}
