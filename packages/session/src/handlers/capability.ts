import { type ParamsOf, SessionNotFoundError } from '@wmp/jsonrpc-envelope';
import type { WmpContext } from '../context.js';
import { DEFAULT_SECURITY_POLICY, negotiateSecurity, updateCapabilities } from '../negotiate.js';
import type { RequestHandler } from '../peer.js';
import { UNKNOWN_SESSION } from '../refusal-reasons.js';
import type { ServerServices } from '../services.js';
import { checkCreator, keyPackageOf } from './session.js';

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
      checkCreator(session, ctx.sender);
      const keyPackage = keyPackageOf(raw);
      const capabilities = updateCapabilities(session.capabilities, params.add, params.remove, s.supportedCapabilities);
      const next = params.security
        ? negotiateSecurity(params.security, s.options.security ?? DEFAULT_SECURITY_POLICY)
        : undefined;
      let security = session.security;
      let welcome: string | undefined;
      if (next) {
        // The session's MLS group outlives a change between MLS modes; an upgrade from `tls`
        // creates it, adding the caller's key package as at create.
        let groupInfo = session.security.mls_group_info;
        if (next.mode !== 'tls' && groupInfo === undefined && s.options.mls && next.cipher_suite !== undefined) {
          const group = await s.options.mls.createGroup({
            sessionId: session.id,
            cipherSuite: next.cipher_suite,
            initiator: ctx.sender ?? session.initiator,
            keyPackage,
          });
          groupInfo = group.groupInfo;
          welcome = group.welcome;
        }
        security = next.mode !== 'tls' && groupInfo !== undefined ? { ...next, mls_group_info: groupInfo } : next;
      }
      const updated = await s.store.update(session.id, (current) => ({ ...current, capabilities, security }));
      if (updated === undefined) throw new SessionNotFoundError(UNKNOWN_SESSION);
      return {
        wmp: { version: session.version, session_id: session.id },
        capabilities,
        security,
        ...(welcome ? { mls_welcome: welcome } : {}),
      };
    },
  };
}
