import * as v from 'valibot';
import { identifier, MAX_LIST_LENGTH, nonEmptyString, stringList, timestamp } from './common.js';

/** Compact detached JWS `<header>..<signature>` (decision 0015; the object form of vector C6 is refused). */
export const DETACHED_JWS_PATTERN = /^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/;
export const detachedJws = v.pipe(v.string(), v.regex(DETACHED_JWS_PATTERN, 'must be a compact detached JWS'));

export const TrustHintSchema = v.looseObject({ framework: nonEmptyString });

export const IdentityAssertionSchema = v.variant('type', [
  v.looseObject({
    type: v.literal('verifiable_presentation'),
    format: nonEmptyString,
    vp_token: v.string(),
    audience: v.string(),
    nonce: v.string(),
    disclosed_claims: v.optional(stringList),
    trust_hints: v.optional(v.array(TrustHintSchema)),
  }),
  v.looseObject({
    type: v.literal('x509_chain'),
    x5c: v.pipe(v.array(v.string()), v.minLength(1)),
    trust_hints: v.optional(v.array(TrustHintSchema)),
  }),
]);

export const SenderDelegateSchema = v.looseObject({
  id: identifier,
  identity_assertions: v.optional(v.array(IdentityAssertionSchema)),
  authorization: v.optional(
    v.looseObject({
      type: v.picklist(['verifiable_presentation', 'mandate', 'power_of_attorney']),
      credential: v.optional(v.string()),
      scope: v.optional(stringList),
      valid_until: v.optional(timestamp),
    }),
  ),
});

export const ServiceClassSchema = v.picklist(['best_effort', 'standard', 'registered', 'certified']);

/** One hop of `wmp.relay_chain` (core §5.7). */
export const RelayEntrySchema = v.looseObject({
  relay: nonEmptyString,
  relay_id: identifier,
  timestamp: timestamp,
  timestamp_token: v.optional(v.string()),
  signature: v.optional(detachedJws),
  service_class: v.optional(ServiceClassSchema),
});

/**
 * The `wmp` metadata object (core §3.2). Unknown members are kept and ignored, as receivers must.
 * `session_id` is any non-empty string here: ids we issue match `^ses-[A-Za-z0-9]+$`, but other
 * implementations issue other shapes and an unknown id is -31000, not -32602.
 */
export const WmpMetadataSchema = v.looseObject({
  version: v.pipe(v.string(), v.regex(/^[0-9]+\.[0-9]+$/, 'must be MAJOR.MINOR')),
  session_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  sender: v.optional(identifier),
  sender_delegate: v.optional(SenderDelegateSchema),
  timestamp: v.optional(timestamp),
  timestamp_token: v.optional(v.string()),
  encrypted: v.optional(v.boolean()),
  epoch: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
  signature: v.optional(detachedJws),
  expires_at: v.optional(timestamp),
  deliver_after: v.optional(timestamp),
  identity_assertions: v.optional(v.pipe(v.array(IdentityAssertionSchema), v.maxLength(MAX_LIST_LENGTH))),
  relay_chain: v.optional(v.pipe(v.array(RelayEntrySchema), v.maxLength(64))),
  trace_id: v.optional(v.string()),
  message_id: v.optional(v.string()),
});

export type WmpMetadata = v.InferOutput<typeof WmpMetadataSchema>;
export type RelayEntry = v.InferOutput<typeof RelayEntrySchema>;
export type IdentityAssertion = v.InferOutput<typeof IdentityAssertionSchema>;
export type SenderDelegate = v.InferOutput<typeof SenderDelegateSchema>;
