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
import { eitherMethod, methodParams, methodResult, notificationMethod, requestMethod } from './method-spec.js';

export const MessageStatusSchema = v.picklist(['queued', 'delivered', 'expired', 'dropped']);
/**
 * A deliver request's result `status`: `accepted` (on disk and being forwarded to a live
 * connection), or a status value (`queued`: held for a recipient online nowhere).
 */
export const DeliverResultStatusSchema = v.picklist(['accepted', 'queued', 'delivered', 'expired', 'dropped']);
export const AckStatusSchema = v.picklist(['received', 'read', 'processed', 'failed']);

/** The consignment modes of core §3.5 (wmp-tables §3.2). */
export const ConsignmentModeSchema = v.picklist(['basic', 'consented', 'consented_signed']);

/** The id of a message awaiting its recipient's consent. */
const consignedId = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

const messageIds = v.pipe(
  v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  v.minLength(1),
  v.maxLength(500),
);

export const messagingMethods = {
  // Sent as a notification by most clients; as a request by those that want an acknowledgement.
  'wmp.message.deliver': eitherMethod(
    methodParams({
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
    methodResult({ message_id: v.optional(v.string()), status: v.optional(DeliverResultStatusSchema) }),
    // Sending it needs no capability beyond a session; `relay` for third parties is judged on `to`.
    { content: { capability: 'messaging', clear: ['to'] }, toInitiator: 'session' },
  ),
  'wmp.message.ack': notificationMethod(methodParams({ message_ids: messageIds, status: AckStatusSchema })),
  'wmp.message.status': notificationMethod(
    methodParams({
      message_id: v.pipe(v.string(), v.minLength(1)),
      status: MessageStatusSchema,
      recipient: v.optional(identifier),
      queued_until: v.optional(timestamp),
      reason: v.optional(v.string()),
    }),
    { toInitiator: 'session' },
  ),
  'wmp.message.poll': requestMethod(
    methodParams({ since: v.optional(v.string()), limit: v.optional(positiveInteger) }),
    methodResult({ messages: v.array(anyObject), has_more: v.optional(v.boolean()) }),
  ),
  // Ours (docs/wmp-profile.md "Consignment"): the consignment modes of core §3.5 without the
  // methods the spec leaves unnamed. The recipient's relay tells the recipient of a `consented`
  // message (sender and metadata, no content), and the recipient accepts or rejects it.
  'wmp.message.notice': notificationMethod(
    methodParams({
      message_id: consignedId,
      sender: identifier,
      consignment_mode: ConsignmentModeSchema,
      content_hash: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
      size: nonNegativeInteger,
      content_type: v.optional(v.string()),
      message_type: v.optional(v.string()),
      subject: v.optional(v.string()),
      recipient: v.optional(identifier),
      recipient_assurance_level: v.optional(v.string()),
      expires_at: v.optional(timestamp),
    }),
    { toInitiator: 'session' },
  ),
  'wmp.message.accept': requestMethod(
    methodParams({ message_id: consignedId, content_hash: v.optional(v.pipe(v.string(), v.maxLength(128))) }),
    methodResult({ message_id: v.string(), status: v.picklist(['accepted']) }),
  ),
  'wmp.message.reject': requestMethod(
    methodParams({ message_id: consignedId, reason: v.optional(v.pipe(v.string(), v.maxLength(256))) }),
    methodResult({ message_id: v.string(), status: v.picklist(['rejected']) }),
  ),
  'wmp.message.fetch': requestMethod(
    methodParams({ since_epoch: v.optional(nonNegativeInteger), sessions: v.optional(stringList) }),
    methodResult({ messages: v.array(anyObject), has_more: v.optional(v.boolean()) }),
  ),
} as const;
