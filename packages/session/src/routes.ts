import type { JsonRpcNotification, JsonRpcRequest, ParamsOf } from '@wmp/jsonrpc-envelope';
import type { WmpContext } from './context.js';
import type { SessionRecord } from './session-model.js';

/**
 * A session this responder routes between two other parties instead of answering it (a relay,
 * transport §6.2): its record names them; the responder keeps it only to know where frames go.
 */
export interface SessionRoute {
  /** The party that sent the create. */
  readonly initiator: string;
  /** The party that answered it. */
  readonly responder: string;
}

/** A routed session's record: a `SessionRecord` whose `route` is set. */
export type RoutedSessionRecord = SessionRecord & { readonly route: SessionRoute };

export function isRouted(session: SessionRecord): session is RoutedSessionRecord {
  return (session as { route?: unknown }).route !== undefined;
}

/** What `SessionRoutes.offer` decided for a create. */
export type RouteOffer =
  /** Another responder answered it: its result is the answer, unchanged. */
  | { readonly answer: Record<string, unknown> }
  /** It is hosted here after all: created as usual, with `wmp` of the result extended by `mark`. */
  | { readonly host: Readonly<Record<string, unknown>> };

/**
 * How a responder that routes sessions (a relay) takes part in the pipeline: it sees every create
 * first, and every message naming a routed session (in `wmp.session_id`, or the `session_id` of a
 * resume) goes to `pass` instead of a handler: before any schema of this responder, since the
 * two parties may speak methods it does not know.
 */
export interface SessionRoutes {
  /** A create before it is answered here; undefined: answered here as usual. */
  offer?(
    params: ParamsOf<'wmp.session.create'>,
    context: WmpContext,
  ): RouteOffer | undefined | Promise<RouteOffer | undefined>;
  /** A message of a routed session: passed on; resolves with a request's result (or rejects with its error). */
  pass(message: JsonRpcRequest | JsonRpcNotification, session: RoutedSessionRecord, context: WmpContext): unknown;
}
