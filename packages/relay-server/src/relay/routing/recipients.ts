import { InvalidParamsError, NotAuthorizedError, type ParamsOf, ParticipantNotFoundError } from '@wmp/jsonrpc-envelope';
import { identifierProblem, type SessionRecord } from '@wmp/session';
import { isReservedKey } from './held-keys.js';

/**
 * A session with participants besides its creator is a group session hosted by the relay
 * (docs/architecture.md, "Group sessions").
 */
export function isGroupSession(session: SessionRecord): boolean {
  return session.participants.length > 1;
}

/**
 * Who a deliver goes to. On a group session: the listed `to` (each must be a participant,
 * -31008) or every participant, never the sender; the sender must itself be a participant
 * (-31002), checked on every message. On a hop session: `to`, which is required (-32602).
 */
export function recipientsOf(
  params: ParamsOf<'wmp.message.deliver'>,
  session: SessionRecord,
  sender: string,
): string[] {
  if (isGroupSession(session)) {
    if (!session.participants.includes(sender)) throw new NotAuthorizedError({ reason: 'not a participant' });
    for (const to of params.to ?? []) {
      if (!session.participants.includes(to))
        throw new ParticipantNotFoundError({ reason: 'not a participant', participant: to });
    }
    return [...new Set(params.to ?? session.participants)].filter((p) => p !== sender);
  }
  if (!params.to || params.to.length === 0) throw new InvalidParamsError({ reason: 'to required' });
  return [...new Set(params.to)];
}

/**
 * -32602 naming the first recipient of a hop session's `to` that is malformed for its scheme (an
 * invalid did:key, say), before anything is queued for it: nobody could ever take it. A group's
 * participants were checked when it was created. Cheap for a recipient seen before.
 */
export function checkRecipients(to: readonly string[]): void {
  for (let i = 0; i < to.length; i++) {
    if (isReservedKey(to[i]!)) throw new InvalidParamsError({ reason: `to.${i}: not an identifier` });
    const problem = identifierProblem(to[i]!);
    if (problem !== undefined) throw new InvalidParamsError({ reason: `to.${i}: ${problem}` });
  }
}
