import * as v from 'valibot';
import { anyObject, nonEmptyString, positiveInteger } from './common.js';
import { eitherMethod, methodParams, methodResult, notificationMethod, requestMethod } from './method-spec.js';

const flowId = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

export const FlowStateSchema = v.picklist(['in_progress', 'completed', 'error', 'cancelled', 'timed_out']);

/** Flow content the initiator sends (a start also exercises its flow type's capability). */
const flowContent = { capability: 'flows', content: {} } as const;
/** Flow content the responder sends the initiator, on the flow's session. */
const flowOutcome = { capability: 'flows', content: {}, toInitiator: 'session' } as const;

export const flowMethods = {
  'wmp.flow.start': requestMethod(
    methodParams({
      flow_type: nonEmptyString,
      flow_id: flowId,
      params: v.optional(anyObject),
      timeout: v.optional(positiveInteger),
    }),
    methodResult({ flow_id: flowId, flow_type: v.optional(v.string()) }),
    flowContent,
  ),
  'wmp.flow.progress': notificationMethod(
    methodParams({ flow_id: flowId, step: nonEmptyString, payload: v.optional(anyObject) }),
    flowOutcome,
  ),
  'wmp.flow.action': requestMethod(
    methodParams({ flow_id: flowId, action: nonEmptyString, params: v.optional(anyObject) }),
    methodResult({ flow_id: flowId, action: v.optional(v.string()), status: v.optional(v.string()) }),
    flowContent,
  ),
  'wmp.flow.complete': notificationMethod(
    methodParams({ flow_id: flowId, result: v.optional(anyObject) }),
    flowOutcome,
  ),
  'wmp.flow.error': notificationMethod(
    methodParams({
      flow_id: flowId,
      code: v.pipe(v.number(), v.safeInteger()),
      message: v.string(),
      data: v.optional(anyObject),
    }),
    flowOutcome,
  ),
  // A request with a result (core §6.2); C18 lists it as a notification, which we also accept.
  // An id and a reason, which the responder must read: control traffic, never encrypted.
  'wmp.flow.cancel': eitherMethod(
    methodParams({ flow_id: flowId, reason: v.optional(v.string()) }),
    methodResult({ flow_id: flowId, status: v.literal('cancelled') }),
    { capability: 'flows' },
  ),
  'wmp.credential.notification': notificationMethod(
    methodParams({
      flow_id: flowId,
      notification_id: nonEmptyString,
      event: v.picklist(['credential_accepted', 'credential_failure']),
      event_description: v.optional(v.string()),
    }),
  ),
} as const;
