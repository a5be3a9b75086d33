// What wmp-relay adds to the relay library's /health, /metrics and well-known document: its
// version (`version` in /health, `wmp_relay_build_info{version}` in /metrics), the OHAN box's
// metrics, which the app mounts, and an announced key rotation (`relay_id_rotation`). The library's routes are registered when the relay is made, before the app can add
// any, so the app wraps the relay's fetch (the function `listen()` serves) for these two paths.
import type { Relay } from '@wmp/relay-server/node';

export interface EndpointExtras {
  readonly version: string;
  /** The box's Prometheus text, when the box is up. */
  readonly boxMetrics: () => Promise<string>;
  /** `relay_id_rotation` of the well-known document while a key rotation is announced or just done. */
  readonly rotation?: () => Record<string, unknown> | undefined;
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
    const rotation = path === '/.well-known/wmp-configuration' && response.ok ? extras.rotation?.() : undefined;
    if (rotation !== undefined) {
      const body = (await response.json()) as Record<string, unknown>;
      return Response.json(
        { ...body, relay_id_rotation: rotation },
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
