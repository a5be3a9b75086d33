import { CapabilityNotSupportedError, type ParamsOf } from '@wmp/jsonrpc-envelope';
import type { WmpContext } from '../context.js';
import type { RequestHandler } from '../peer.js';
import type { ServerServices } from '../services.js';

/** wmp.resolve (core §5.8): pluggable resolvers by type; an unknown type is -31005 with `type`. */
export function resolveHandlers(s: ServerServices): Record<string, RequestHandler<WmpContext>> {
  return {
    'wmp.resolve': async (raw, ctx) => {
      const params = raw as ParamsOf<'wmp.resolve'>;
      const session = ctx.session!;
      const supported = session.capabilities.resolve?.supported_types;
      const resolver = s.options.resolvers?.[params.type];
      if (!resolver || (supported && !supported.includes(params.type)))
        throw new CapabilityNotSupportedError({ type: params.type });
      const found = await resolver(params.uri, params.options as Record<string, unknown> | undefined, ctx);
      return {
        wmp: { version: session.version, session_id: session.id },
        type: params.type,
        uri: params.uri,
        metadata: found ? (found.metadata ?? null) : null,
        ...(found?.content_type === undefined ? {} : { content_type: found.content_type, body: found.body ?? null }),
        ...(found?.trust_info ? { trust_info: found.trust_info } : {}),
      };
    },
  };
}
