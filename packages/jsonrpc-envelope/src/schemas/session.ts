import * as v from 'valibot';
import { AuthSchema, CapabilitiesSchema, SecuritySchema } from './capabilities.js';
import { identifier, identifierList, nonNegativeInteger, positiveInteger, stringList } from './common.js';
import { methodParams, methodResult, notificationMethod, requestMethod } from './method-spec.js';

const token = v.pipe(v.string(), v.minLength(1), v.maxLength(512));

const sessionOpened = methodResult({
  capabilities: v.optional(CapabilitiesSchema),
  security: v.optional(SecuritySchema),
  challenge: v.optional(v.string()),
  resumption_token: v.optional(v.string()),
  auth_required: v.optional(v.boolean()),
  auth: v.optional(AuthSchema),
});

export const sessionMethods = {
  'wmp.session.create': requestMethod(
    methodParams({
      participants: v.optional(identifierList),
      capabilities_offered: v.optional(CapabilitiesSchema),
      security: v.optional(SecuritySchema),
      ttl: v.optional(positiveInteger),
      auth: v.optional(AuthSchema),
      nonce: v.optional(v.string()),
      invitation_nonce: v.optional(v.string()),
      accepted_schemes: v.optional(stringList),
    }),
    sessionOpened,
    { access: 'sessionless' },
  ),
  'wmp.session.authenticate': requestMethod(
    methodParams({ auth: AuthSchema }),
    methodResult({
      authenticated: v.boolean(),
      participant_id: v.optional(identifier),
      identity: v.optional(identifier),
    }),
    { access: 'pending' },
  ),
  'wmp.session.resume': requestMethod(
    methodParams({
      session_id: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
      resumption_token: token,
      last_received_id: v.optional(v.string()),
      last_message_id: v.optional(v.string()),
    }),
    methodResult({
      resumed: v.boolean(),
      resumption_token: v.optional(v.string()),
      missed_messages: v.optional(nonNegativeInteger),
      capabilities: v.optional(CapabilitiesSchema),
      security: v.optional(SecuritySchema),
    }),
    { access: 'sessionless' },
  ),
  // Defined by this project (docs/wmp-profile.md, "Sessions and identities"): enter a relay-hosted
  // group session as a listed participant.
  'wmp.session.join': requestMethod(
    methodParams({
      session_id: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
      invitation_nonce: v.optional(v.string()),
    }),
    sessionOpened,
    { access: 'sessionless' },
  ),
  'wmp.session.close': notificationMethod(
    methodParams({ reason: v.picklist(['complete', 'timeout', 'error', 'user_cancelled']) }),
    { access: 'pending', toInitiator: 'session' },
  ),
  'wmp.capability.update': requestMethod(
    methodParams({
      add: v.optional(CapabilitiesSchema),
      remove: v.optional(stringList),
      security: v.optional(SecuritySchema),
    }),
    methodResult({ capabilities: CapabilitiesSchema, security: v.optional(SecuritySchema) }),
  ),
  'wmp.capability.list': requestMethod(
    methodParams({}),
    methodResult({ capabilities: CapabilitiesSchema, security: v.optional(SecuritySchema) }),
  ),
} as const;
