import * as v from 'valibot';
import { base64url, identifier, nonNegativeInteger, positiveInteger, timestamp } from './common.js';
import { methodParams, methodResult, requestMethod } from './method-spec.js';

/** The most key packages one publish call may carry. */
export const MAX_KEY_PACKAGES_PER_PUBLISH = 100;

const keyPackage = v.pipe(base64url, v.minLength(1), v.maxLength(16 * 1024));

/**
 * The OHAN relay's own methods (docs/architecture.md, "Session engine"; the spec forbids custom
 * `wmp.*` names). They are not WMP core: a relay registers them on its server like any
 * application's custom methods.
 */
export const ohanMethods = {
  // The identity travels in the body.
  'ohan.mls.keypackage.publish': requestMethod(
    methodParams({
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
    methodResult({ accepted: nonNegativeInteger }),
  ),
  'ohan.mls.keypackage.fetch': requestMethod(
    methodParams({ identity: identifier, cipher_suite: v.optional(positiveInteger) }),
    methodResult({ identity: identifier, key_package: keyPackage, cipher_suite: positiveInteger }),
  ),
  // How the relay would route to an identity (docs/federation-profile.md): `here` or a relay
  // origin.
  'ohan.relay.resolve': requestMethod(
    methodParams({ identity: identifier }),
    methodResult({ identity: identifier, home: v.string(), source: v.string() }),
  ),
} as const;
