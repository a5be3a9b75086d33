import type { ParamsOf } from '@wmp/jsonrpc-envelope';
import type { WmpContext } from '../context.js';
import { negotiateSecurity, updateCapabilities } from '../negotiate.js';
import type { RequestHandler } from '../peer.js';
import type { ServerServices } from '../services.js';

/** wmp.capability.list / update (core §4.2.4, §4.2.5). */
export function capabilityHandlers(s: ServerServices): Record<string, RequestHandler<WmpContext>> {
  return {
    'wmp.capability.list': (_raw, ctx) => {
      const session = ctx.session!;
      return {
        wmp: { version: session.version, session_id: session.id },
        capabilities: session.capabilities,
        security: session.security,
      };
    },
    'wmp.capability.update': async (raw, ctx) => {
      const params = raw as ParamsOf<'wmp.capability.update'>;
      const session = ctx.session!;
      session.capabilities = updateCapabilities(
        session.capabilities,
        params.add,
        params.remove,
        s.supportedCapabilities,
      );
      if (params.security) {
        const next = negotiateSecurity(
          params.security,
          s.options.security ?? { modes: ['tls', 'mls', 'mls-optional'], cipherSuites: [1, 2] },
        );
        // The session's MLS group outlives a change between MLS modes.
        let groupInfo = session.security.mls_group_info;
        if (next.mode !== 'tls' && groupInfo === undefined && s.options.mls && next.cipher_suite !== undefined) {
          groupInfo = (await s.options.mls.createGroup({ sessionId: session.id, cipherSuite: next.cipher_suite }))
            .groupInfo;
        }
        session.security =
          next.mode !== 'tls' && groupInfo !== undefined ? { ...next, mls_group_info: groupInfo } : next;
      }
      await s.store.put(session);
      return {
        wmp: { version: session.version, session_id: session.id },
        capabilities: session.capabilities,
        security: session.security,
      };
    },
  };
}
