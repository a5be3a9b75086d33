import { b64urlDecode, b64urlEncode } from '@wmp/jcs-signing';
import { MlsBridgeError } from './errors.js';
import { decodeMlsMessage, encodeMlsMessage, type MLSMessage } from './ts-mls.js';

/** An MLSMessage of one wire format. */
export type MlsMessageOf<W extends MLSMessage['wireformat']> = Extract<MLSMessage, { wireformat: W }>;

/** The MLSMessage as it travels in WMP: base64url without padding (core §5.2). */
export function encodeMessage(message: MLSMessage): string {
  return b64urlEncode(encodeMlsMessage(message));
}

/**
 * Decodes a base64url MLSMessage and checks its wire format. Garbage of any kind (bad base64url,
 * a truncated or over-long message, trailing bytes, another wire format, a decoder that throws) is
 * `malformed`, never a ts-mls exception.
 */
export function decodeMessage<W extends MLSMessage['wireformat']>(text: unknown, ...wireformats: W[]): MlsMessageOf<W> {
  if (typeof text !== 'string' || text.length === 0) throw new MlsBridgeError('malformed');
  let bytes: Uint8Array;
  try {
    bytes = b64urlDecode(text);
  } catch (e) {
    throw new MlsBridgeError('malformed', { cause: e });
  }
  let decoded: [MLSMessage, number] | undefined;
  try {
    decoded = decodeMlsMessage(bytes, 0);
  } catch (e) {
    throw new MlsBridgeError('malformed', { cause: e });
  }
  if (!decoded || decoded[1] !== bytes.length || decoded[0].version !== 'mls10') throw new MlsBridgeError('malformed');
  const message = decoded[0];
  if (!(wireformats as string[]).includes(message.wireformat)) throw new MlsBridgeError('malformed');
  return message as MlsMessageOf<W>;
}

/** What anyone (a relay) can read of an MLS message without keys. */
export interface MlsMessageInfo {
  readonly wireformat: 'private_message' | 'public_message' | 'welcome' | 'group_info' | 'key_package';
  /** For private and public messages: what they carry. */
  readonly contentType?: 'application' | 'proposal' | 'commit';
  /** For private and public messages and group infos: the group id, base64url. */
  readonly groupId?: string;
  /** For private and public messages and group infos. */
  readonly epoch?: number;
}

/**
 * Reads the clear header of a base64url MLSMessage: wire format, content type, group and epoch.
 * This is what a relay needs to order commits per epoch without decrypting anything. Throws
 * `malformed` for garbage.
 */
export function inspectMessage(text: string): MlsMessageInfo {
  const m = decodeMessage(
    text,
    'mls_private_message',
    'mls_public_message',
    'mls_welcome',
    'mls_group_info',
    'mls_key_package',
  );
  switch (m.wireformat) {
    case 'mls_private_message':
      return {
        wireformat: 'private_message',
        contentType: m.privateMessage.contentType,
        groupId: b64urlEncode(m.privateMessage.groupId),
        epoch: epochNumber(m.privateMessage.epoch),
      };
    case 'mls_public_message':
      return {
        wireformat: 'public_message',
        contentType: m.publicMessage.content.contentType,
        groupId: b64urlEncode(m.publicMessage.content.groupId),
        epoch: epochNumber(m.publicMessage.content.epoch),
      };
    case 'mls_group_info':
      return {
        wireformat: 'group_info',
        groupId: b64urlEncode(m.groupInfo.groupContext.groupId),
        epoch: epochNumber(m.groupInfo.groupContext.epoch),
      };
    case 'mls_welcome':
      return { wireformat: 'welcome' };
    default:
      return { wireformat: 'key_package' };
  }
}

/** An MLS epoch (uint64) as a JSON-safe number; WMP carries it as `wmp.epoch`. */
export function epochNumber(epoch: bigint): number {
  if (epoch > BigInt(Number.MAX_SAFE_INTEGER)) throw new MlsBridgeError('malformed');
  return Number(epoch);
}
