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
  readonly part?: string;
  /** When it falls due (`AppendOptions.dueAt`), else undefined. */
  readonly dueAt?: number;
}

export function queueRecord(message: QueueMessageInput, options: AppendOptions): QueueRecord {
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
    ...(dueAt === undefined ? {} : { dueAt }),
  };
}

/** A message for a part of a partitioned queue (`appendToPart`), after the same checks. */
export function partRecord(
  message: QueueMessageInput,
  options: AppendOptions & { readonly part: string },
): QueueRecord {
  const part = options?.part;
  if (typeof part !== 'string' || part.length === 0) throw new StoreInputError('part must be a non-empty string');
  return { ...queueRecord(message, options), part };
}
