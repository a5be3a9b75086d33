import { coreMethods, type JsonRpcId } from '@wmp/jsonrpc-envelope';
import type { BaseContext, Peer } from './peer.js';

/** What a responder sends an initiator on a session, routed to the session it names (their descriptors say so). */
const SESSION_ROUTED = coreMethods.names((spec) => spec.toInitiator === 'session');

/** Takes what the responder sends one session of a peer. */
export type SessionInbound = (
  method: string,
  params: Record<string, unknown>,
  requestId: JsonRpcId | undefined,
) => Promise<void> | void;

/** Sessions by id on one peer: one set of handlers routes to all of them. */
const inboundByPeer = new WeakMap<Peer<BaseContext>, Map<string, SessionInbound>>();

/** The session of a peer that takes what names a session nobody on the peer holds (`routeUnrouted`). */
const unroutedByPeer = new WeakMap<Peer<BaseContext>, SessionInbound>();

/**
 * Routes what arrives on `peer` for session `id` (its `wmp.session_id`, or the transport's session;
 * the only session when neither is named) to `inbound`. The peer's handlers are set once.
 */
export function routeSession(peer: Peer<BaseContext>, id: string, inbound: SessionInbound): void {
  let sessions = inboundByPeer.get(peer);
  if (!sessions) {
    const routes = new Map<string, SessionInbound>();
    sessions = routes;
    inboundByPeer.set(peer, routes);
    const route = (method: string) => (params: unknown, ctx: BaseContext) => {
      const p = (params ?? {}) as Record<string, unknown>;
      const named = (p.wmp as { session_id?: string } | undefined)?.session_id ?? ctx.extra?.sessionId;
      const target = named
        ? (routes.get(named) ?? unroutedByPeer.get(peer))
        : routes.size === 1
          ? [...routes.values()][0]
          : undefined;
      return target ? target(method, p, ctx.requestId) : undefined;
    };
    for (const method of SESSION_ROUTED) {
      peer.setNotificationHandler(method, route(method));
      peer.setRequestHandler(method, route(method));
    }
  }
  sessions.set(id, inbound);
}

/**
 * `inbound` also takes what arrives on `peer` naming a session nobody there holds: a relay's
 * messages of a group session this client is listed in but never joined (they come on its
 * registered connection, naming the group).
 */
export function routeUnrouted(peer: Peer<BaseContext>, inbound: SessionInbound | undefined): void {
  if (inbound === undefined) unroutedByPeer.delete(peer);
  else unroutedByPeer.set(peer, inbound);
}

/** Stops routing to session `id` on `peer`. */
export function unrouteSession(peer: Peer<BaseContext>, id: string): void {
  inboundByPeer.get(peer)?.delete(id);
}
