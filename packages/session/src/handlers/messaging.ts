import type { ParamsOf } from '@wmp/jsonrpc-envelope';
import type { WmpContext } from '../context.js';
import type { RequestHandler } from '../peer.js';
import type { ServerServices } from '../services.js';

/** wmp.message.deliver / ack / poll: the session checks are done; what to do is the application's. */
export function messagingHandlers(s: ServerServices): Record<string, RequestHandler<WmpContext>> {
  const hooks = s.options.hooks;
  return {
    'wmp.message.deliver': (raw, ctx) => hooks?.deliver?.(raw as ParamsOf<'wmp.message.deliver'>, ctx),
    'wmp.message.ack': async (raw, ctx) => {
      await hooks?.ack?.(raw as ParamsOf<'wmp.message.ack'>, ctx);
    },
    'wmp.message.poll': async (raw, ctx) =>
      (await hooks?.poll?.(raw as ParamsOf<'wmp.message.poll'>, ctx)) ?? { messages: [], has_more: false },
  };
}
