import * as v from 'valibot';
import {
  anyObject,
  base64url,
  identifier,
  identifierList,
  nonNegativeInteger,
  positiveInteger,
  stringList,
  timestamp,
} from './common.js';
import { either, notification, params, request, result } from './method-spec.js';

export const MessageStatusSchema = v.picklist(['queued', 'delivered', 'expired', 'dropped']);
export const AckStatusSchema = v.picklist(['received', 'read', 'processed', 'failed']);

const messageIds = v.pipe(
  v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  v.minLength(1),
  v.maxLength(500),
);

export const messagingMethods = {
  // Sent as a notification by most clients; as a request by those that want an acknowledgement.
  'wmp.message.deliver': either(
    params({
      to: v.optional(identifierList),
      content_type: v.optional(v.string()),
      body: v.optional(v.unknown()),
      ciphertext: v.optional(base64url),
      reply_to: v.optional(identifier),
      in_reply_to: v.optional(v.union([v.string(), v.number()])),
      message_type: v.optional(v.string()),
      consignment_mode: v.optional(v.string()),
      recipient_assurance_level: v.optional(v.string()),
      applicable_policies: v.optional(stringList),
    }),
    result({ message_id: v.optional(v.string()), status: v.optional(MessageStatusSchema) }),
  ),
  'wmp.message.ack': notification(params({ message_ids: messageIds, status: AckStatusSchema })),
  'wmp.message.status': notification(
    params({
      message_id: v.pipe(v.string(), v.minLength(1)),
      status: MessageStatusSchema,
      recipient: v.optional(identifier),
      queued_until: v.optional(timestamp),
      reason: v.optional(v.string()),
    }),
  ),
  'wmp.message.poll': request(
    params({ since: v.optional(v.string()), limit: v.optional(positiveInteger) }),
    result({ messages: v.array(anyObject), has_more: v.optional(v.boolean()) }),
  ),
  'wmp.message.fetch': request(
    params({ since_epoch: v.optional(nonNegativeInteger), sessions: v.optional(stringList) }),
    result({ messages: v.array(anyObject), has_more: v.optional(v.boolean()) }),
  ),
} as const;
