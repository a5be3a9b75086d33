/** Helpers to read what the relay forwards on a group session (clear parts only). */

export type Params = Record<string, unknown>;

export const isRecord = (x: unknown): x is Params => x !== null && typeof x === 'object' && !Array.isArray(x);
export const str = (x: unknown): string | undefined => (typeof x === 'string' && x.length > 0 ? x : undefined);

/** Longer sender-chosen ids are not remembered (they would bloat the stored set). */
const MAX_CLIENT_MESSAGE_ID = 128;

/** The clear facts of a forwarded message: its relay id, sender and epoch. */
export interface Clear {
  readonly messageId: string | undefined;
  readonly sender: string | undefined;
  readonly epoch: number | undefined;
  /** What identifies it for deduplication: `m:<message_id>`, `c:<sender> <client_message_id>`. */
  readonly ids: string[];
}

export function clearOf(params: Params): Clear {
  const wmp = isRecord(params.wmp) ? params.wmp : {};
  const messageId = str(wmp.message_id);
  const sender = str(wmp.sender);
  const cid = str(wmp.client_message_id);
  const ids: string[] = [];
  if (messageId !== undefined) ids.push(`m:${messageId}`);
  if (cid !== undefined && sender !== undefined && cid.length <= MAX_CLIENT_MESSAGE_ID) ids.push(`c:${sender} ${cid}`);
  const epoch = typeof wmp.epoch === 'number' && Number.isSafeInteger(wmp.epoch) ? wmp.epoch : undefined;
  return { messageId, sender, epoch, ids };
}

/** The `wmp.mls.group.*` methods that carry a commit, by the method a commit of ours is sent with. */
export const COMMIT_METHODS: ReadonlySet<string> = new Set([
  'wmp.mls.group.add',
  'wmp.mls.group.remove',
  'wmp.mls.group.update',
]);

/** mls-bridge reasons of an incoming message that may read fine once the group has caught up. */
export const TRANSIENT_REASONS: ReadonlySet<string> = new Set(['unknown_epoch', 'commit_pending']);
