/**
 * `@wmp/session/x509`: X.509 authentication (`x5c`) and identities, on pkijs. A subpath of its own
 * so that applications without X.509 never load pkijs; browser-safe like the rest of the package.
 */
export { type MtlsOptions, mtlsAuthenticator } from './auth/mtls.js';
export { type X5cOptions, X509_SCHEMES, x5cAuthenticator } from './auth/x5c.js';
export { type X5cSignatureOptions, x5cSignatureVerifier, x509MessageSigner } from './auth/x5c-signatures.js';
export {
  CertificateParseError,
  type CertificateParseFailure,
  checkLeafIdentity,
  type LeafInfo,
  leafInfo,
  parseCertificateDer,
  parseTrustAnchors,
  parseX5c,
  type TrustAnchors,
  type X5cLimits,
} from './auth/x509.js';
export type { AssuranceAnchors } from './auth/x509-assurance.js';
export { type ValidateChainOptions, validateChain } from './auth/x509-chain.js';
export type { CertificatePurpose } from './auth/x509-extensions.js';
export {
  type X509Identity,
  X509IdentityError,
  type X509IdentityFailure,
  type X509IdentityOptions,
  x509Identity,
} from './auth/x509-identity.js';
