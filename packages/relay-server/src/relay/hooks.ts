import type { ServerHooks } from '@wmp/session';
import type { Endpoint } from './presence.js';
import { isGroupSession } from './recipients.js';
import { registrationsOf, wantsStatuses } from './registration.js';
import type { RelayServices } from './services.js';

/** Queue entries one poll returns at most. */
const MAX_POLL = 100;

/**
 * The WmpServer hooks a relay fills in (besides `deliver`): acknowledgements remove from the
 * queue and tell the sender `delivered`; a resume acknowledges through `last_received_id`,
 * restores the registration on the new connection and replays the rest in order; poll reads the
 * queue without removing anything; a session that ends takes its registrations with it.
 */
export function relayHooks(s: RelayServices): Omit<ServerHooks, 'deliver'> {
  return {
    async ack(params, ctx) {
      if (ctx.sender === undefined) return;
      s.statuses.removed(await s.queue.ack(ctx.sender, params.message_ids), 'delivered');
    },

    async poll(params, ctx) {
      if (ctx.sender === undefined) return { messages: [], has_more: false };
      const limit = Math.min(params.limit ?? MAX_POLL, MAX_POLL);
      const page = await s.queue.after(ctx.sender, params.since, limit, s.now());
      return { messages: page.messages.map((m) => JSON.parse(m.body) as unknown), has_more: page.more };
    },

    async resume(session, identity, lastReceivedId, connection) {
      if (identity === undefined) return 0;
      if (lastReceivedId !== undefined) {
        s.statuses.removed(await s.queue.ackThrough(identity, lastReceivedId), 'delivered');
      }
      const until = registrationsOf(session)[identity];
      let endpoint: Endpoint | undefined;
      if (until !== undefined && until > s.now()) {
        endpoint = s.presence.ensure(identity, connection, 0, true);
        if (endpoint) s.presence.setHop(endpoint, session.id, until, wantsStatuses(session));
      } else if (isGroupSession(session)) {
        endpoint = s.presence.ensure(identity, connection, 0, true);
      }
      if (endpoint === undefined && (until !== undefined || isGroupSession(session))) {
        s.logger.warn('relay.resume_unrouted', { reason: 'connections per identity' });
      }
      const { count } = await s.queue.stats(identity);
      // After the resume answer, so the client knows its session before the replay arrives.
      if (endpoint) {
        const e = endpoint;
        setTimeout(() => void s.forwarder.pump(e), 0);
      }
      return count;
    },

    sessionEnded(session) {
      s.presence.dropSession(session.id);
    },
  };
}
