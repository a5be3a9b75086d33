// The recipient's consent to a `consented` or `consented_signed` message (core §3.5, wmp-tables
// §3.2): `wmp.message.accept` hands the content over, `wmp.message.reject` drops it; both ours
// (docs/wmp-profile.md "Consignment"), answered by the recipient or its registered delegate.
import { contentHash, verifyMessage } from '@wmp/jcs-signing';
import { InvalidParamsError, NotAuthorizedError, type ParamsOf } from '@wmp/jsonrpc-envelope';
import type { RequestHandler, SessionRecord, WmpContext } from '@wmp/session';
import type { QueuedMessage, QueueStore } from '../../storage/contracts/queue-store.js';
import type { Forwarder } from '../routing/forwarder.js';
import { consignmentEvent, consignmentModeOf } from '../routing/handover.js';
import { consentKey } from '../routing/held-keys.js';
import type { RoutedMessage } from '../routing/routed-message.js';
import type { StatusNotifier } from '../statuses/statuses.js';
import { assuranceOf, isAssuranceLevel, meetsAssurance } from '../support/assurance.js';
import type { ResolvedRegistered } from '../support/registered.js';
import { metaFor } from '../support/session-meta.js';
import { recipientsActedFor } from './delegations.js';

export interface ConsignmentDeps {
  readonly queue: Pick<QueueStore, 'get' | 'ack' | 'append'>;
  readonly forwarder: Pick<Forwarder, 'offerRouted'>;
  readonly statuses: Pick<StatusNotifier, 'send'>;
  readonly registered: ResolvedRegistered;
  now(): number;
}

interface Consigned {
  readonly recipient: string;
  readonly held: QueuedMessage;
  readonly message: RoutedMessage;
}

/** The message awaiting consent that `ctx` may answer for, or -32602. */
async function consignedFor(s: ConsignmentDeps, ctx: WmpContext, id: string): Promise<Consigned> {
  for (const recipient of recipientsActedFor(ctx, s.now())) {
    const held = await s.queue.get(consentKey(recipient), id);
    if (held !== undefined && held.expiresAt > s.now()) {
      return { recipient, held, message: JSON.parse(held.body) as RoutedMessage };
    }
  }
  throw new InvalidParamsError({ reason: 'no message awaiting consent' });
}

/** The recipient's delegate in an event, when a delegate answered. */
function delegateOf(ctx: WmpContext, recipient: string): { recipientDelegate?: string } {
  return ctx.sender !== undefined && ctx.sender !== recipient ? { recipientDelegate: ctx.sender } : {};
}

/** Takes the held message out and tells its sender it was dropped, with `reason`. */
async function drop(s: ConsignmentDeps, c: Consigned, reason: string): Promise<void> {
  const [removed] = await s.queue.ack(consentKey(c.recipient), [c.held.id]);
  if (removed === undefined) return;
  s.statuses.send(
    removed.sender,
    { message_id: c.held.id, status: 'dropped', recipient: c.recipient, reason },
    removed.notify,
  );
}

/**
 * `wmp.message.accept {message_id, content_hash?}`: the content goes into the recipient's queue
 * and out to its connections (each still held to the message's assurance level); its sender
 * hears `delivered` when it is written. `consented_signed` needs `content_hash` and the
 * acceptance signed by whoever accepts (-31010 otherwise): that signature is the receipt. One
 * who authenticated below the message's `recipient_assurance_level` fails the delivery for good
 * (-31002 `insufficient_assurance`, the sender hears `dropped`).
 */
export function acceptHandler(s: ConsignmentDeps): RequestHandler<WmpContext> {
  return async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.message.accept'>;
    const session = ctx.session as SessionRecord;
    const acting = ctx.sender;
    if (acting === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
    const c = await consignedFor(s, ctx, params.message_id);
    const now = s.now();
    const mode = consignmentModeOf(c.message.params, s.registered);
    if (params.content_hash !== undefined && params.content_hash !== contentHash(c.message)) {
      throw new InvalidParamsError({ reason: 'content_hash does not match the message' });
    }
    let receipt: string | undefined;
    if (mode === 'consented_signed') {
      if (params.content_hash === undefined) throw new InvalidParamsError({ reason: 'content_hash required' });
      const request = { jsonrpc: '2.0' as const, method: 'wmp.message.accept', params: ctx.request.params ?? {} };
      await verifyMessage(request, {
        required: true,
        signer: acting,
        ...(s.registered.signatureChains ? { x5c: s.registered.signatureChains } : {}),
      });
      receipt = params.wmp.signature;
    }
    const wanted = c.message.params.recipient_assurance_level;
    if (isAssuranceLevel(wanted) && !meetsAssurance(assuranceOf(session, acting, s.registered.assurance), wanted)) {
      await drop(s, c, 'insufficient_assurance');
      s.registered.evidence.witness(
        consignmentEvent('delivery_failed', c.message, c.recipient, now, {
          reason: 'insufficient_assurance',
          ...delegateOf(ctx, c.recipient),
        }),
      );
      throw new NotAuthorizedError({ reason: 'insufficient_assurance' });
    }
    const { held } = c;
    const appended = await s.queue.append(
      c.recipient,
      { id: held.id, sender: held.sender, body: held.body, notify: held.notify, evidence: held.evidence },
      { expiresAt: held.expiresAt, bytes: held.bytes },
    );
    if (appended.status === 'queued') void s.forwarder.offerRouted(c.recipient, appended.seq, c.message);
    await s.queue.ack(consentKey(c.recipient), [held.id]);
    s.registered.evidence.witness(
      consignmentEvent('acceptance_confirmed', c.message, c.recipient, now, {
        ...(receipt ? { receipt } : {}),
        ...delegateOf(ctx, c.recipient),
      }),
    );
    return { wmp: metaFor(session.id, session.version), message_id: held.id, status: 'accepted' };
  };
}

/** `wmp.message.reject {message_id, reason?}`: the content is dropped; its sender hears `dropped` (`recipient_rejected`). */
export function rejectHandler(s: ConsignmentDeps): RequestHandler<WmpContext> {
  return async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.message.reject'>;
    const session = ctx.session as SessionRecord;
    if (ctx.sender === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
    const c = await consignedFor(s, ctx, params.message_id);
    await drop(s, c, 'recipient_rejected');
    s.registered.evidence.witness(
      consignmentEvent('acceptance_rejected', c.message, c.recipient, s.now(), {
        reason: 'recipient_rejected',
        ...delegateOf(ctx, c.recipient),
      }),
    );
    return { wmp: metaFor(session.id, session.version), message_id: c.held.id, status: 'rejected' };
  };
}
