/**
 * `@wmp/session/sd-jwt`: identity assertions as SD-JWT VCs (core §5.6), on the `@sd-jwt/*`
 * libraries: the relying party's `AssertionChecker` for a `WmpServer`, the holder's presentation
 * and an issuer's helper. A subpath of its own so that applications that verify no credential
 * install and load none of it; browser-safe like the rest of the package.
 */
export { sdJwtAssertionChecker } from './sd-jwt/checker.js';
export { type DelegationCredentialPolicy, sdJwtDelegationChecker } from './sd-jwt/delegation.js';
export { SdJwtVerificationError } from './sd-jwt/failure.js';
export {
  type CredentialInfo,
  credentialInfo,
  ed25519HolderKey,
  type HolderKey,
  type PresentOptions,
  presentSdJwt,
  type SdJwtAssertion,
  sdJwtAssertion,
} from './sd-jwt/holder.js';
export { type IssueSdJwtVcInput, issueSdJwtVc } from './sd-jwt/issue.js';
export {
  type AssertionDeps,
  type AssertionPolicy,
  KNOWN_TRUST_FRAMEWORKS,
  SD_JWT_FORMATS,
} from './sd-jwt/policy.js';
export { type SdJwtPresenterOptions, sdJwtPresenter } from './sd-jwt/presenter.js';
