import * as v from 'valibot';
import { anyObject, nonEmptyString, positiveInteger } from './common.js';
import { notification, params, request, result } from './method-spec.js';

const flowId = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

export const FlowStateSchema = v.picklist(['in_progress', 'completed', 'error', 'cancelled', 'timed_out']);

export const flowMethods = {
  'wmp.flow.start': request(
    params({
      flow_type: nonEmptyString,
      flow_id: flowId,
      params: v.optional(anyObject),
      timeout: v.optional(positiveInteger),
    }),
    result({ flow_id: flowId, flow_type: v.optional(v.string()) }),
  ),
  'wmp.flow.progress': notification(params({ flow_id: flowId, step: nonEmptyString, payload: v.optional(anyObject) })),
  'wmp.flow.action': request(
    params({ flow_id: flowId, action: nonEmptyString, params: v.optional(anyObject) }),
    result({ flow_id: flowId, action: v.optional(v.string()), status: v.optional(v.string()) }),
  ),
  'wmp.flow.complete': notification(params({ flow_id: flowId, result: v.optional(anyObject) })),
  'wmp.flow.error': notification(
    params({
      flow_id: flowId,
      code: v.pipe(v.number(), v.safeInteger()),
      message: v.string(),
      data: v.optional(anyObject),
    }),
  ),
  // A request with a result (core §6.2); C18 lists it as a notification, which we also accept.
  'wmp.flow.cancel': {
    kind: 'either',
    params: params({ flow_id: flowId, reason: v.optional(v.string()) }),
    result: result({ flow_id: flowId, status: v.literal('cancelled') }),
  },
  'wmp.credential.notification': notification(
    params({
      flow_id: flowId,
      notification_id: nonEmptyString,
      event: v.picklist(['credential_accepted', 'credential_failure']),
      event_description: v.optional(v.string()),
    }),
  ),
} as const;
