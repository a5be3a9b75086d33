import * as v from 'valibot';
import { anyObject, nonEmptyString } from './common.js';
import { methodParams, methodResult, requestMethod } from './method-spec.js';

export const resolveMethods = {
  // The result carries `metadata` (what go-wmp, wmp-js and the vectors use) and, when the resolver
  // provides them, the spec's `content_type` + `body` too (docs/wmp-profile.md, "Resolve").
  'wmp.resolve': requestMethod(
    methodParams({ type: nonEmptyString, uri: nonEmptyString, options: v.optional(anyObject) }),
    methodResult({
      type: v.string(),
      uri: v.string(),
      metadata: v.optional(v.unknown()),
      content_type: v.optional(v.string()),
      body: v.optional(v.unknown()),
      trust_info: v.optional(v.looseObject({ trusted: v.optional(v.boolean()), source: v.optional(v.string()) })),
    }),
    { capability: 'resolve' },
  ),
} as const;
