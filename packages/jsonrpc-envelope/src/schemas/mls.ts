import * as v from 'valibot';
import { base64url, identifier, nonNegativeInteger, positiveInteger, stringList } from './common.js';
import { notification, params, request, result } from './method-spec.js';

const mlsBytes = v.pipe(base64url, v.minLength(1));
const epochResult = result({ epoch: nonNegativeInteger });

/** The MLS binding's methods (wmp-mls; tables §8). Payloads are base64url without padding. */
export const mlsMethods = {
  'wmp.mls.group.create': request(
    params({
      group_id: mlsBytes,
      cipher_suite: positiveInteger,
      accepted_credential_types: v.optional(stringList),
      accepted_identity_schemes: v.optional(stringList),
      group_info: v.optional(base64url),
      welcomes: v.optional(v.record(identifier, mlsBytes)),
    }),
    result({ group_id: mlsBytes, epoch: nonNegativeInteger }),
  ),
  'wmp.mls.group.join': request(
    params({ group_id: v.optional(mlsBytes), welcome_processed: v.optional(v.boolean()) }),
    result({ group_id: mlsBytes, epoch: nonNegativeInteger }),
  ),
  'wmp.mls.group.add': request(
    params({ participant: identifier, commit: mlsBytes, welcome: v.optional(mlsBytes) }),
    epochResult,
  ),
  'wmp.mls.group.remove': request(params({ participant: identifier, commit: mlsBytes }), epochResult),
  'wmp.mls.group.update': notification(params({ commit: mlsBytes })),
} as const;
