import { FlowError, type ParamsOf } from '@wmp/jsonrpc-envelope';
import type { WmpContext } from '../context.js';
import type { FlowNotifier } from '../flows.js';
import type { RequestHandler } from '../peer.js';
import type { ServerServices } from '../services.js';

/** wmp.flow.start / action / cancel (core §6.2), with the session's `flows.max_concurrent`. */
export function flowHandlers(s: ServerServices): Record<string, RequestHandler<WmpContext>> {
  const notify: FlowNotifier = (sessionId, method, params) => s.notifySession(sessionId, method, params);
  return {
    'wmp.flow.start': async (raw, ctx) => {
      const params = raw as ParamsOf<'wmp.flow.start'>;
      const session = ctx.session!;
      const max = session.capabilities.flows?.max_concurrent;
      if (max !== undefined && s.flows.activeCount(session.id) >= max) {
        throw new FlowError({ flow_id: params.flow_id, reason: 'too_many_flows', retryable: true, current_step: null });
      }
      const flow = await s.flows.start(
        {
          sessionId: session.id,
          flowId: params.flow_id,
          type: params.flow_type,
          initiator: ctx.sender ?? params.wmp.sender,
          params: (params.params ?? {}) as Record<string, unknown>,
          timeoutSeconds: params.timeout,
          members: session.participants,
        },
        notify,
      );
      return { wmp: { version: session.version, session_id: session.id }, flow_id: flow.id, flow_type: flow.type };
    },
    'wmp.flow.action': async (raw, ctx) => {
      const params = raw as ParamsOf<'wmp.flow.action'>;
      const session = ctx.session!;
      const flow = await s.flows.action(
        session.id,
        params.flow_id,
        params.action,
        (params.params ?? {}) as Record<string, unknown>,
        notify,
        ctx.sender ?? params.wmp.sender,
      );
      return {
        wmp: { version: session.version, session_id: session.id },
        flow_id: flow.id,
        action: params.action,
        status: flow.state,
      };
    },
    'wmp.flow.cancel': (raw, ctx) => {
      const params = raw as ParamsOf<'wmp.flow.cancel'>;
      const session = ctx.session!;
      const flow = s.flows.cancel(session.id, params.flow_id, ctx.sender ?? params.wmp.sender);
      return { wmp: { version: session.version, session_id: session.id }, flow_id: flow.id, status: 'cancelled' };
    },
  };
}
