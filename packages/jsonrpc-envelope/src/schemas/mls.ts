import * as v from 'valibot';
import { base64url, identifier, nonNegativeInteger, positiveInteger, stringList } from './common.js';
import { methodParams, methodResult, notificationMethod, requestMethod } from './method-spec.js';

const mlsBytes = v.pipe(base64url, v.minLength(1));
const epochResult = methodResult({ epoch: nonNegativeInteger });

// Already MLS messages (never encrypted again); a relay fans them out to the group session's layer.
const group = { toInitiator: 'group' } as const;

/** The MLS binding's methods (wmp-mls; tables §8). Payloads are base64url without padding. */
export const mlsMethods = {
  'wmp.mls.group.create': requestMethod(
    methodParams({
      group_id: mlsBytes,
      cipher_suite: positiveInteger,
      accepted_credential_types: v.optional(stringList),
      accepted_identity_schemes: v.optional(stringList),
      group_info: v.optional(base64url),
      welcomes: v.optional(v.record(identifier, mlsBytes)),
    }),
    methodResult({ group_id: mlsBytes, epoch: nonNegativeInteger }),
    group,
  ),
  'wmp.mls.group.join': requestMethod(
    methodParams({ group_id: v.optional(mlsBytes), welcome_processed: v.optional(v.boolean()) }),
    methodResult({ group_id: mlsBytes, epoch: nonNegativeInteger }),
    group,
  ),
  'wmp.mls.group.add': requestMethod(
    methodParams({ participant: identifier, commit: mlsBytes, welcome: v.optional(mlsBytes) }),
    epochResult,
    group,
  ),
  'wmp.mls.group.remove': requestMethod(
    methodParams({ participant: identifier, commit: mlsBytes }),
    epochResult,
    group,
  ),
  'wmp.mls.group.update': notificationMethod(methodParams({ commit: mlsBytes }), group),
} as const;
