import { NotAuthorizedError, type ParamsOf, ParticipantNotFoundError, RateLimitedError } from '@wmp/jsonrpc-envelope';
import { newMessageId, type RequestHandler, type SessionRecord, type WmpContext } from '@wmp/session';
import type { MlsGroupRecord, MlsGroupStore } from '../../storage/contracts/mls-group-store.js';
import type { QueueStore } from '../../storage/contracts/queue-store.js';
import { RelayQueueFullError } from '../../storage/errors.js';
import { isGroupSession } from '../routing/recipients.js';
import type { Router } from '../routing/route.js';
import type { RoutedMessage } from '../routing/routed-message.js';
import { wantsStatuses } from '../statuses/statuses.js';
import type { RelayTimings } from '../support/limits.js';
import type { Logger } from '../support/logger.js';
import { metaFor } from '../support/session-meta.js';
import { canonicalGroupId, checkWelcome, commitOf, digest, groupInfoOf, mlsRefusal } from './mls-input.js';

/** What the relay side of MLS group sessions takes: routing, the queues it checks, the groups it orders. */
export interface MlsGroupDeps {
  readonly router: Pick<Router, 'routedMessage' | 'routeToRecipients'>;
  /** Each participant's queue, and the caps the store enforces (the config's, or a ready store's own). */
  readonly queue: Pick<QueueStore, 'stats' | 'limits'>;
  readonly groups: MlsGroupStore;
  readonly timings: Pick<RelayTimings, 'maxMessageTtlSeconds'>;
  readonly logger: Logger;
  now(): number;
}

type CommitKind = 'add' | 'remove' | 'update';
type Params = Record<string, unknown> & { wmp: Record<string, unknown> };

/** The caller, who must be a participant of the relay-hosted group session it calls on (-31002). */
function memberOf(ctx: WmpContext): { sender: string; session: SessionRecord } {
  const session = ctx.session as SessionRecord;
  const sender = ctx.sender;
  if (sender === undefined || !isGroupSession(session) || !session.participants.includes(sender)) {
    throw new NotAuthorizedError({ reason: 'participants of a group session only' });
  }
  return { sender, session };
}

/** Another participant of the session, named by a method (-31008 otherwise). */
function otherParticipant(session: SessionRecord, sender: string, participant: string): string {
  if (participant === sender || !session.participants.includes(participant)) {
    throw new ParticipantNotFoundError({ reason: 'not a participant', participant });
  }
  return participant;
}

/**
 * A message id the same for the same group operation, so a retry (after a lost answer, or a
 * relay that stopped between ordering and queueing) is recognised by every recipient's queue
 * instead of being queued twice.
 */
function operationId(...parts: Array<string | number>): string {
  return `msg-${digest(parts.join('|')).slice(0, 22)}`;
}

function without(params: Params, key: string): Params {
  const { [key]: _dropped, ...rest } = params;
  return rest as Params;
}

/**
 * The relay side of MLS group sessions (tables §8, docs/architecture.md, "Group sessions"):
 * `wmp.mls.group.*` from a participant is forwarded, durably queued, to every other participant; a
 * Welcome only to the participant it is for. The relay reads only clear MLS headers
 * (`inspectMessage`): it orders commits per group, the first commit of an epoch wins and a
 * competing one is -31004 `epoch_conflict` with the current `epoch`. It never decrypts anything.
 */
export function mlsGroupMethods(s: MlsGroupDeps): Record<string, RequestHandler<WmpContext>> {
  /** Group messages stay as long as the session (a member that misses a commit can read nothing after it). */
  const expiryOf = (session: SessionRecord) =>
    Math.min(session.expiresAt, s.now() + s.timings.maxMessageTtlSeconds * 1000);

  /** Queues `messages` for every other participant and forwards them; -31014 when none took it. */
  async function fanOut(
    ctx: WmpContext,
    session: SessionRecord,
    sender: string,
    messageId: string,
    messages: Map<string, RoutedMessage>,
    isRequest: boolean,
  ): Promise<void> {
    const outcome = await s.router.routeToRecipients({
      sender,
      connection: ctx.connection,
      notify: wantsStatuses(session),
      messageId,
      expiresAt: expiryOf(session),
      group: session.id,
      messages,
      isRequest,
    });
    if (outcome.accepted === 0 && outcome.full) throw outcome.full;
  }

  /** One routed message per recipient: `personal` ones for some, the shared `common` one for the rest. */
  async function messagesFor(
    session: SessionRecord,
    sender: string,
    method: string,
    messageId: string,
    epoch: number,
    common: Params,
    personal: ReadonlyMap<string, Params>,
  ): Promise<Map<string, RoutedMessage>> {
    const sign = (params: Params) => s.router.routedMessage(method, params, sender, messageId, session.id, { epoch });
    const shared = await sign(common);
    const out = new Map<string, RoutedMessage>();
    for (const p of session.participants) {
      if (p === sender) continue;
      const own = personal.get(p);
      out.set(p, own ? await sign(own) : shared);
    }
    return out;
  }

  /**
   * A commit may advance the group only if every other participant's queue can take it: a member
   * that misses a commit is cut off from the group. Checked before ordering (a race past it is
   * reported as `dropped`, as for any message).
   */
  async function assertRoom(session: SessionRecord, sender: string): Promise<void> {
    const { maxQueued } = s.queue.limits;
    for (const p of session.participants) {
      if (p !== sender && (await s.queue.stats(p)).count >= maxQueued) throw new RelayQueueFullError('max_queued');
    }
  }

  async function groupOf(session: SessionRecord): Promise<MlsGroupRecord> {
    const group = await s.groups.get(session.id);
    if (group === undefined) throw mlsRefusal('unknown_group');
    return group;
  }

  const create: RequestHandler<WmpContext> = async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.mls.group.create'>;
    const { sender, session } = memberOf(ctx);
    const groupId = canonicalGroupId(params.group_id);
    // The epoch the group is in: the GroupInfo's (members added before create are in it), else 0.
    let epoch = params.wmp.epoch ?? 0;
    if (params.group_info !== undefined) {
      const info = groupInfoOf(params.group_info);
      if (info.groupId !== groupId) throw mlsRefusal('wrong_group');
      if (params.wmp.epoch !== undefined && params.wmp.epoch !== info.epoch) throw mlsRefusal('epoch_mismatch');
      epoch = info.epoch;
    }
    const welcomes = new Map(Object.entries(params.welcomes ?? {}));
    for (const [participant, welcome] of welcomes) {
      otherParticipant(session, sender, participant);
      checkWelcome(welcome);
    }
    const created = await s.groups.create({
      sessionId: session.id,
      groupId,
      cipherSuite: params.cipher_suite,
      epoch,
      expiresAt: session.expiresAt,
    });
    if (created.status === 'full') throw new RateLimitedError({ reason: 'too many MLS groups' });
    const group = created.group;
    if (group.groupId !== groupId) throw mlsRefusal('group_exists', { group_id: group.groupId, epoch: group.epoch });
    // A repeated create of the same group is answered again and re-queued under the same id.
    const messageId = operationId(session.id, 'create', groupId);
    const common = without(ctx.request.params as Params, 'welcomes');
    const personal = new Map(
      [...welcomes].map(([p, w]) => [p, { ...common, welcomes: { [p]: w } } as Params] as const),
    );
    const messages = await messagesFor(session, sender, 'wmp.mls.group.create', messageId, epoch, common, personal);
    await fanOut(ctx, session, sender, messageId, messages, ctx.requestId !== undefined);
    return {
      wmp: metaFor(session.id, session.version),
      group_id: group.groupId,
      epoch: group.epoch,
      message_id: messageId,
    };
  };

  const join: RequestHandler<WmpContext> = async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.mls.group.join'>;
    const { sender, session } = memberOf(ctx);
    const group = await groupOf(session);
    if (params.group_id !== undefined && canonicalGroupId(params.group_id) !== group.groupId) {
      throw mlsRefusal('wrong_group', { group_id: group.groupId });
    }
    const messageId = newMessageId();
    // A join announces; Welcomes travel only with create and add.
    const common = without(without(ctx.request.params as Params, 'welcome'), 'welcomes');
    const messages = await messagesFor(
      session,
      sender,
      'wmp.mls.group.join',
      messageId,
      group.epoch,
      common,
      new Map(),
    );
    await fanOut(ctx, session, sender, messageId, messages, ctx.requestId !== undefined);
    return {
      wmp: metaFor(session.id, session.version),
      group_id: group.groupId,
      epoch: group.epoch,
      message_id: messageId,
    };
  };

  /** add / remove / update: one commit, ordered by its epoch, then forwarded to every other participant. */
  const commit =
    (kind: CommitKind): RequestHandler<WmpContext> =>
    async (raw, ctx) => {
      const params = raw as { wmp: { epoch?: number }; commit: string; participant?: string; welcome?: string };
      const { sender, session } = memberOf(ctx);
      const named =
        params.participant === undefined ? undefined : otherParticipant(session, sender, params.participant);
      if (params.welcome !== undefined) checkWelcome(params.welcome);
      const inner = commitOf(params.commit);
      const group = await groupOf(session);
      if (inner.groupId !== group.groupId) throw mlsRefusal('wrong_group', { group_id: group.groupId });
      if (params.wmp.epoch !== undefined && params.wmp.epoch !== inner.epoch) throw mlsRefusal('epoch_mismatch');
      const hash = digest(params.commit);
      if (inner.epoch === group.epoch) await assertRoom(session, sender);
      const ordered = await s.groups.advance(session.id, inner.epoch, hash);
      if (ordered.status === 'missing') throw mlsRefusal('unknown_group');
      if (ordered.status === 'conflict') throw mlsRefusal('epoch_conflict', { epoch: ordered.epoch });

      const messageId = operationId(session.id, 'commit', inner.epoch, hash);
      const full = ctx.request.params as Params;
      // A Welcome goes only to the participant an add adds; on other commits it has no place.
      const common = without(full, 'welcome');
      const personal = new Map<string, Params>(kind === 'add' && named !== undefined ? [[named, full]] : []);
      const method = `wmp.mls.group.${kind}`;
      try {
        const messages = await messagesFor(session, sender, method, messageId, inner.epoch, common, personal);
        await fanOut(ctx, session, sender, messageId, messages, ctx.requestId !== undefined);
      } catch (e) {
        // Nobody got the commit that moved the group (a full queue, a failed write): move it back,
        // so the committer (told by the error) or another member can commit in that epoch again.
        if (ordered.status === 'advanced') await s.groups.retract(session.id, inner.epoch, hash);
        throw e;
      }
      if (ordered.status === 'advanced') s.logger.debug('relay.mls_commit', { kind, epoch: ordered.epoch });
      return { wmp: metaFor(session.id, session.version), epoch: ordered.epoch, message_id: messageId };
    };

  return {
    'wmp.mls.group.create': create,
    'wmp.mls.group.join': join,
    'wmp.mls.group.add': commit('add'),
    'wmp.mls.group.remove': commit('remove'),
    'wmp.mls.group.update': commit('update'),
  };
}
