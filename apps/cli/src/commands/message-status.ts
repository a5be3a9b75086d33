// Statuses of the live messages you sent (core §5.3.1): `wmp status <message-id>` says what became
// of one, from what this home learnt; `listen` and `connect` show each status that arrives and
// record it (the relay keeps a status for a sender who is away, until it is acknowledged).
import type { MessageStatusEvent, WmpClient } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec } from '../command.js';
import { NotFoundError } from '../errors.js';
import type { Output } from '../output.js';
import { isMessageId, loadSent, recordStatus, type SentRecord } from '../sent-messages.js';
import { printable, shortDid } from './common.js';

/** What each status means, for people. */
const MEANING: Readonly<Record<SentRecord['status'], string>> = {
  accepted: 'accepted: the recipient was online, the relay was handing it over',
  queued: 'queued: the relay keeps it until the recipient connects',
  delivered: 'delivered: handed to a connection of the recipient',
  expired: 'expired: the recipient did not connect before it expired',
  dropped: 'dropped: the relay will not deliver it',
};

function reasonText(reason: string | null | undefined): string {
  return reason ? ` (${printable(reason)})` : '';
}

/** A status as `listen` prints it: JSON value and human line. */
export function statusItem(s: MessageStatusEvent) {
  const value = {
    type: 'status',
    message_id: s.messageId,
    status: s.status,
    recipient: s.recipient ?? null,
    reason: s.reason ?? null,
    queued_until: s.queuedUntil ?? null,
  };
  const to = s.recipient ? ` to ${shortDid(s.recipient)}` : '';
  return { value, human: `message ${printable(s.messageId)}${to}: ${s.status}${reasonText(s.reason)}` };
}

/**
 * Records every status `client` receives and, with `show`, prints it. The listener returns once
 * the record is written: the SDK acknowledges a status the relay kept only after that.
 */
export function followStatuses(
  ctx: Pick<CommandContext, 'home'>,
  client: WmpClient,
  show: Output | undefined,
): () => void {
  return client.on('status', async (s) => {
    await recordStatus(ctx.home, s);
    if (show) {
      const item = statusItem(s);
      show.item(item.value, () => item.human);
    }
  });
}

const status: CommandSpec = {
  path: ['status'],
  summary: 'say what became of a live message you sent',
  description: [
    "From what this home learnt: the relay's answer to wmp send, then each status that reached a",
    'wmp of this home (send, listen, connect). A status that came while no wmp was connected waits',
    'at the relay: wmp listen collects it (and shows it). A message this home knows nothing of is',
    'exit 3.',
  ],
  args: [{ name: 'message-id', kind: 'text', help: 'the id wmp send printed (msg-...)' }],
  examples: ['wmp status msg-0123456789abcdef0123456789abcdef', 'wmp --json status msg-...'],
  async run(ctx) {
    const id = (ctx.args['message-id'] as string).trim();
    const record = isMessageId(id) ? await loadSent(ctx.home, id) : undefined;
    if (!record) {
      throw new NotFoundError(
        `nothing is known of message ${printable(id.slice(0, 200))} in ${ctx.home.dir}`,
        'wmp knows the messages sent from this home (wmp send prints their ids). Statuses that came ' +
          'since wait at the relay: run wmp listen, then ask again.',
        { message_id: id },
      );
    }
    const final = record.status !== 'queued' && record.status !== 'accepted';
    ctx.out.result({ ...record, final }, () => [
      `message  ${record.message_id}`,
      `status   ${MEANING[record.status]}${reasonText(record.reason)}`,
      ...(record.to ? [`to       ${record.to}`] : []),
      ...(record.relay ? [`relay    ${record.relay}`] : []),
      ...(record.sent_at ? [`sent     ${record.sent_at}`] : []),
      `updated  ${record.updated_at}`,
      ...(final ? [] : ['(no final status yet: wmp listen collects statuses that wait at the relay)']),
    ]);
  },
};

export const statusCommands: readonly CommandSpec[] = [status];
