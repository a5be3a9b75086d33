import * as v from 'valibot';
import { AuthSchema } from './capabilities.js';
import { positiveInteger } from './common.js';
import { methodParams, methodResult, requestMethod } from './method-spec.js';

export const relayMethods = {
  'wmp.relay.register': requestMethod(
    methodParams({ auth: v.optional(AuthSchema) }),
    methodResult({ registered: v.boolean(), ttl: v.optional(positiveInteger) }),
  ),
} as const;
