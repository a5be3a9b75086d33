import * as v from 'valibot';
import { AuthSchema } from './capabilities.js';
import { base64url, identifier, nonNegativeInteger, positiveInteger, timestamp } from './common.js';
import { params, request, result } from './method-spec.js';

/** The most key packages one publish call may carry. */
export const MAX_KEY_PACKAGES_PER_PUBLISH = 100;

const keyPackage = v.pipe(base64url, v.minLength(1), v.maxLength(16 * 1024));

export const relayMethods = {
  'wmp.relay.register': request(
    params({ auth: v.optional(AuthSchema) }),
    result({ registered: v.boolean(), ttl: v.optional(positiveInteger) }),
  ),
  // Our methods (DESIGN §3): the spec forbids custom wmp.* names. The identity travels in the body.
  'ohan.mls.keypackage.publish': request(
    params({
      key_packages: v.pipe(
        v.array(
          v.looseObject({
            key_package: keyPackage,
            cipher_suite: positiveInteger,
            expires: v.optional(timestamp),
            // Ours: the identity's one last-resort package (RFC 9420 §16.8), kept and reused.
            last_resort: v.optional(v.boolean()),
          }),
        ),
        v.minLength(1),
        v.maxLength(MAX_KEY_PACKAGES_PER_PUBLISH),
      ),
    }),
    result({ accepted: nonNegativeInteger }),
  ),
  'ohan.mls.keypackage.fetch': request(
    params({ identity: identifier, cipher_suite: v.optional(positiveInteger) }),
    result({ identity: identifier, key_package: keyPackage, cipher_suite: positiveInteger }),
  ),
  // Ours: how the relay would route to an identity (DESIGN §3 federation): `here` or a relay origin.
  'ohan.relay.resolve': request(
    params({ identity: identifier }),
    result({ identity: identifier, home: v.string(), source: v.string() }),
  ),
} as const;
