import { NotAuthorizedError, type ParamsOf, ParticipantNotFoundError } from '@wmp/jsonrpc-envelope';
import type { RequestHandler, SessionRecord, WmpContext } from '@wmp/session';
import { registerHandler } from './registration.js';
import { metaFor, type RelayServices } from './services.js';

/** Queue entries one `wmp.message.fetch` reads at most. */
const MAX_FETCH = 100;

function identityOf(ctx: WmpContext): string {
  if (ctx.sender === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
  return ctx.sender;
}

/** The methods a relay adds to the session engine, by name (dispatch by map, `server.handle`). */
export function relayMethods(s: RelayServices): Record<string, RequestHandler<WmpContext>> {
  return {
    'wmp.relay.register': registerHandler(s),

    'ohan.mls.keypackage.publish': (raw, ctx) => {
      const params = raw as ParamsOf<'ohan.mls.keypackage.publish'>;
      const session = ctx.session as SessionRecord;
      const accepted = s.keyPackages.publish(identityOf(ctx), params.key_packages);
      return { wmp: metaFor(session.id, session.version), accepted };
    },

    'ohan.mls.keypackage.fetch': (raw, ctx) => {
      const params = raw as ParamsOf<'ohan.mls.keypackage.fetch'>;
      const session = ctx.session as SessionRecord;
      identityOf(ctx); // anyone authenticated may take one
      const entry = s.keyPackages.take(params.identity, params.cipher_suite);
      if (entry === undefined) throw new ParticipantNotFoundError({ reason: 'no key package for this identity' });
      return {
        wmp: metaFor(session.id, session.version),
        identity: params.identity,
        key_package: entry.key_package,
        cipher_suite: entry.cipher_suite,
      };
    },

    // MLS relay queue (S-mls): the caller's queued messages, by epoch and session; nothing is removed.
    'wmp.message.fetch': async (raw, ctx) => {
      const params = raw as ParamsOf<'wmp.message.fetch'>;
      const session = ctx.session as SessionRecord;
      const page = await s.queue.after(identityOf(ctx), undefined, MAX_FETCH, s.now());
      const messages = page.messages
        .map((m) => (JSON.parse(m.body) as { params: { wmp: { epoch?: number; session_id?: string } } }).params)
        .filter(
          (p) =>
            (params.since_epoch === undefined || (p.wmp.epoch ?? 0) >= params.since_epoch) &&
            (params.sessions === undefined ||
              (p.wmp.session_id !== undefined && params.sessions.includes(p.wmp.session_id))),
        );
      return { wmp: metaFor(session.id, session.version), messages, has_more: page.more };
    },
  };
}
