import * as v from 'valibot';
import { nonEmptyString, positiveInteger, stringList } from './common.js';

/** Capabilities by name (core §4.2.2). Known ones are typed; others pass through untouched. */
export const CapabilitiesSchema = v.objectWithRest(
  {
    messaging: v.optional(v.looseObject({ max_size: v.optional(positiveInteger) })),
    flows: v.optional(v.looseObject({ max_concurrent: v.optional(positiveInteger) })),
    sign: v.optional(v.looseObject({ proof_types: v.optional(stringList) })),
    mcp: v.optional(
      v.looseObject({
        tools: v.optional(v.boolean()),
        resources: v.optional(v.boolean()),
        prompts: v.optional(v.boolean()),
      }),
    ),
    relay: v.optional(v.looseObject({ destinations: v.optional(stringList) })),
    offline: v.optional(
      v.looseObject({
        max_queued: v.optional(positiveInteger),
        ttl: v.optional(positiveInteger),
        status_notifications: v.optional(v.boolean()),
      }),
    ),
    resolve: v.optional(v.looseObject({ supported_types: v.optional(stringList) })),
    evidence: v.optional(v.looseObject({ event_types: stringList })),
    oid4vci: v.optional(v.looseObject({})),
    oid4vp: v.optional(v.looseObject({})),
  },
  v.unknown(),
);
export type Capabilities = v.InferOutput<typeof CapabilitiesSchema>;

export const SecurityModeSchema = v.picklist(['tls', 'mls', 'mls-optional']);
export type SecurityMode = v.InferOutput<typeof SecurityModeSchema>;

/** The `security` object (core §4.2.3). */
export const SecuritySchema = v.looseObject({
  mode: SecurityModeSchema,
  min_tls_version: v.optional(v.string()),
  cipher_suites: v.optional(v.pipe(v.array(v.pipe(v.number(), v.safeInteger())), v.maxLength(64))),
  cipher_suite: v.optional(v.pipe(v.number(), v.safeInteger())),
  mls_group_info: v.optional(v.string()),
  encrypted_capabilities: v.optional(stringList),
});
export type Security = v.InferOutput<typeof SecuritySchema>;

/** The `auth` object (core §4.4.2). The auth layer refuses types it does not support with -31002. */
export const AuthSchema = v.looseObject({
  type: nonEmptyString,
  token: v.optional(v.string()),
  proof: v.optional(v.string()),
  signature: v.optional(v.string()),
  challenge: v.optional(v.string()),
  x5c: v.optional(stringList),
});
export type Auth = v.InferOutput<typeof AuthSchema>;
