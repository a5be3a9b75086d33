import { utf8Length } from '@wmp/jsonrpc-envelope';
import { StoreInputError } from '../errors.js';
import type { AppendOptions, QueueMessageInput } from './queue-store.js';

/** A message as a queue stores it, after the checks every adapter makes the same way. */
export interface QueueRecord {
  readonly id: string;
  readonly sender: string;
  readonly body: string;
  readonly expiresAt: number;
  readonly bytes: number;
  readonly notify: boolean;
  readonly evidence: boolean;
  /** The part of a partitioned queue it belongs to (`appendToPart`), else undefined. */
  readonly part?: string | undefined;
  /** When it falls due (`AppendOptions.dueAt`), else undefined. */
  readonly dueAt?: number | undefined;
}

export function queueRecord(message: QueueMessageInput, options: AppendOptions): QueueRecord {
  return checkedRecord(message, options, undefined);
}

/** A message for a part of a partitioned queue (`appendToPart`), after the same checks. */
export function partRecord(
  message: QueueMessageInput,
  options: AppendOptions & { readonly part: string },
): QueueRecord {
  const part = options?.part;
  if (typeof part !== 'string' || part.length === 0) throw new StoreInputError('part must be a non-empty string');
  return checkedRecord(message, options, part);
}

/**
 * Every record in one shape (`part` and `dueAt` always members), written member by member: on
 * Node 20 a member written after a spread (`{ ...record, part }`) costs ~0.5 µs and gives the
 * object a map of its own (decision 0733).
 */
function checkedRecord(message: QueueMessageInput, options: AppendOptions, part: string | undefined): QueueRecord {
  const { id, sender, body } = message ?? {};
  if (typeof id !== 'string' || id.length === 0) throw new StoreInputError('message id must be a non-empty string');
  if (typeof sender !== 'string' || typeof body !== 'string')
    throw new StoreInputError('sender and body must be strings');
  const expiresAt = options?.expiresAt;
  if (!Number.isSafeInteger(expiresAt)) throw new StoreInputError('expiresAt must be an integer (ms)');
  const bytes = options.bytes ?? utf8Length(body);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new StoreInputError('bytes must be a non-negative integer');
  const dueAt = options.dueAt;
  if (dueAt !== undefined && !Number.isSafeInteger(dueAt)) throw new StoreInputError('dueAt must be an integer (ms)');
  return {
    id,
    sender,
    body,
    expiresAt,
    bytes,
    notify: message.notify === true,
    evidence: message.evidence === true,
    part,
    dueAt,
  };
}
