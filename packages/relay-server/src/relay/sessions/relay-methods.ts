import { coreMethods, NotAuthorizedError, ohanMethods, type ParamsOf } from '@wmp/jsonrpc-envelope';
import type { RequestHandler, SessionRecord, WmpContext, WmpServer } from '@wmp/session';
import type { Federation } from '../federation/federation.js';
import { type KeyPackageDeps, publishKeyPackages, takeKeyPackage } from '../mls/key-packages.js';
import { type MlsGroupDeps, mlsGroupMethods } from '../mls/mls-groups.js';
import { type MessageFetchDeps, messageFetchHandler } from '../routing/message-fetch.js';
import { metaFor } from '../support/session-meta.js';
import { acceptHandler, type ConsignmentDeps, rejectHandler } from './consignment-methods.js';
import { acknowledged, type HookDeps } from './hooks.js';
import { type RegistrationDeps, registerHandler } from './registration.js';

/** What the relay's methods use, together: each handler takes its own part. */
export type RelayMethodsDeps = RegistrationDeps &
  MessageFetchDeps &
  ConsignmentDeps &
  MlsGroupDeps &
  KeyPackageDeps & {
    /** Where the relay would route to an identity (`ohan.relay.resolve`), when federation is on. */
    readonly federation: Pick<Federation, 'resolve'> | undefined;
    /** What an acknowledgement tells (`wmp.evidence.ack` removes notifications as `wmp.message.ack` does). */
    readonly acks: Pick<HookDeps, 'statuses' | 'evidence' | 'forwarder' | 'queue'>;
  };

function identityOf(ctx: WmpContext): string {
  if (ctx.sender === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
  return ctx.sender;
}

/** The core WMP methods a relay serves beyond a plain responder, by name (dispatch by map). */
export function relayMethods(s: RelayMethodsDeps): Record<string, RequestHandler<WmpContext>> {
  return {
    'wmp.relay.register': registerHandler(s),
    'wmp.message.fetch': messageFetchHandler(s),
    'wmp.message.accept': acceptHandler(s),
    'wmp.message.reject': rejectHandler(s),
    'wmp.evidence.ack': evidenceAckHandler(s),
    ...mlsGroupMethods(s),
  };
}

/**
 * `wmp.evidence.ack` (wmp-tables §9): the sender (or a peer relay) took the notifications named
 * by `evidence_ids` (their queue ids), whatever its `status` says of them: they leave its queue,
 * as `wmp.message.ack` would remove them. The records stay in the repository.
 */
function evidenceAckHandler(s: RelayMethodsDeps): RequestHandler<WmpContext> {
  return async (raw, ctx) => {
    const { evidence_ids } = coreMethods.validateParams('wmp.evidence.ack', raw) as ParamsOf<'wmp.evidence.ack'>;
    acknowledged(s.acks, await s.acks.queue.ack(identityOf(ctx), evidence_ids));
    return undefined;
  };
}

/**
 * Our own methods (docs/architecture.md, "Group sessions"), with their descriptors from
 * `ohanMethods`: a participant publishes its own key packages, anyone authenticated takes one (a
 * few per hour of each other identity: key-package-budget.ts).
 */
export function ohanMethodHandlers(s: RelayMethodsDeps): Record<keyof typeof ohanMethods, RequestHandler<WmpContext>> {
  return {
    'ohan.mls.keypackage.publish': async (raw, ctx) => {
      const params = raw as ParamsOf<'ohan.mls.keypackage.publish'>;
      const session = ctx.session as SessionRecord;
      const accepted = await publishKeyPackages(s, identityOf(ctx), params.key_packages, ctx.connection);
      return { wmp: metaFor(session.id, session.version), accepted };
    },

    // Ours: where the relay would route to an identity (`wmp route`); a lookup is cached and
    // budgeted per caller. The answer is the home's origin and which rule said so, nothing more of
    // what any server answered.
    'ohan.relay.resolve': async (raw, ctx) => {
      const session = ctx.session as SessionRecord;
      const caller = identityOf(ctx);
      const { identity } = raw as ParamsOf<'ohan.relay.resolve'>;
      const { home, source } =
        s.federation === undefined
          ? { home: 'here', source: 'federation_off' }
          : await s.federation.resolve(identity, caller);
      return { wmp: metaFor(session.id, session.version), identity, home, source };
    },

    'ohan.mls.keypackage.fetch': async (raw, ctx) => {
      const session = ctx.session as SessionRecord;
      const caller = identityOf(ctx);
      return {
        wmp: metaFor(session.id, session.version),
        ...(await takeKeyPackage(s, caller, raw as ParamsOf<'ohan.mls.keypackage.fetch'>)),
      };
    },
  };
}

/** Adds the relay's handlers to the session engine: the core ones by name, ours as custom methods. */
export function registerRelayMethods(server: WmpServer, s: RelayMethodsDeps): void {
  for (const [method, handler] of Object.entries(relayMethods(s))) server.handle(method, handler);
  const ours = ohanMethodHandlers(s);
  for (const method of Object.keys(ours) as (keyof typeof ohanMethods)[]) {
    server.method(method, ohanMethods[method], ours[method]);
  }
}
