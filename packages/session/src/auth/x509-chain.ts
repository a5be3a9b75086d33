import { WmpError } from '@wmp/jsonrpc-envelope';
import * as pkijs from 'pkijs';
import { authFailure } from './reasons.js';
import type { ParsedCertificate } from './x509.js';
import {
  allowsPurpose,
  type CertificatePurpose,
  hasUnprocessedCritical,
  isCa,
  maySign,
  nameConstraintsOf,
  pathLength,
  permittedNameForms,
} from './x509-extensions.js';

/**
 * RFC 5280 path validation of an `x5c` or mTLS chain: pkijs builds the path and checks its
 * signatures, names, validity, CA keyUsage, policies and name constraints; pkijs 4.0.0 does not
 * check pathLenConstraint, extKeyUsage, a CA:TRUE leaf, critical extensions of the leaf, a trust
 * anchor's own constraints, or two name constraints of one form in a path (it takes their union
 * where RFC 5280 takes their intersection), so those are checked here, on the extensions pkijs
 * parsed. See docs/wmp-profile.md (x5c) for the rules as a peer sees them.
 */

export interface ValidateChainOptions {
  /**
   * What the leaf is for, default `clientAuth` (a sender). When a certificate of the chain has an
   * extKeyUsage, it must list this purpose. `null`: none is asked (an SD-JWT issuer's signing
   * certificate, for which RFC 5280 names no purpose).
   */
  readonly purpose?: CertificatePurpose | null;
}

const engine = new pkijs.CryptoEngine({ name: 'webcrypto', crypto: globalThis.crypto });

function sameDer(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
}

function sameCertificate(a: pkijs.Certificate, b: Uint8Array): boolean {
  return sameDer(new Uint8Array(a.toSchema(true).toBER(false)), b);
}

function validity(cert: pkijs.Certificate, now: number): 'expired' | 'not_yet_valid' | undefined {
  if (cert.notAfter.value.getTime() < now) return 'expired';
  if (cert.notBefore.value.getTime() > now) return 'not_yet_valid';
  return undefined;
}

/** `detail`s for the pkijs result codes that name a rule (the rest are plain `untrusted_chain`). */
const PKIJS_DETAILS: ReadonlyMap<number, string> = new Map([
  [3, 'key_usage'],
  [4, 'key_usage'],
  [6, 'critical_extension'],
  [14, 'intermediate_not_ca'],
  [21, 'name_constraints'],
  [41, 'name_constraints'],
  [42, 'name_constraints'],
]);

/**
 * The checks that need no signature, on every certificate presented (leaf first, anchors left
 * out): validity, no critical extension we do not process, intermediates CAs whose extKeyUsage
 * (if any) allows the purpose, and a leaf that is no CA, may sign and is for the purpose.
 */
function checkPresented(
  presented: readonly ParsedCertificate[],
  now: number,
  purpose: CertificatePurpose | null,
): void {
  for (const c of presented) {
    const problem = validity(c.cert, now);
    if (problem) throw authFailure(problem);
  }
  if (presented.some((c) => hasUnprocessedCritical(c.cert))) throw authFailure('untrusted_chain', 'critical_extension');
  const [leaf, ...intermediates] = presented;
  if (intermediates.some((c) => !isCa(c.cert))) throw authFailure('untrusted_chain', 'intermediate_not_ca');
  if (isCa(leaf!.cert)) throw authFailure('untrusted_chain', 'leaf_is_ca');
  if (!maySign(leaf!.cert)) throw authFailure('untrusted_chain', 'key_usage');
  if (purpose !== null && presented.some((c) => !allowsPurpose(c.cert, purpose)))
    throw authFailure('untrusted_chain', 'extended_key_usage');
}

/**
 * The path rules pkijs leaves out, on the path it built (leaf first, anchor last): each CA's
 * pathLenConstraint bounds the CAs below it that are not self-issued (RFC 5280 §6.1.4 (l), (m);
 * an anchor's own too, as openssl does), and no two certificates constrain the same name form.
 */
function checkPath(path: readonly pkijs.Certificate[]): void {
  let below = 0; // CAs between the leaf and the certificate at i that are not self-issued
  for (let i = 1; i < path.length; i++) {
    const limit = pathLength(path[i]!);
    if (limit !== undefined && below > limit) throw authFailure('untrusted_chain', 'path_length');
    if (!path[i]!.subject.isEqual(path[i]!.issuer)) below++;
  }
  const forms = new Set<number>();
  for (const cert of path.slice(1)) {
    for (const form of permittedNameForms(cert)) {
      if (forms.has(form)) throw authFailure('untrusted_chain', 'name_constraints');
      forms.add(form);
    }
  }
}

/** pkijs's verdict on a path from the leaf to one of `anchors`, with an anchor's name constraints if given. */
async function pkijsVerify(
  leaf: ParsedCertificate,
  intermediates: readonly ParsedCertificate[],
  anchors: readonly pkijs.Certificate[],
  now: number,
  anchorConstraints?: { permitted: pkijs.GeneralSubtree[]; excluded: pkijs.GeneralSubtree[] },
): Promise<pkijs.CertificateChainValidationEngineVerifyResult> {
  try {
    // pkijs takes the end-entity certificate as the last of `certs`.
    const validator = new pkijs.CertificateChainValidationEngine({
      trustedCerts: [...anchors],
      certs: intermediates.map((c) => c.cert).concat(leaf.cert),
      checkDate: new Date(now),
    });
    return await validator.verify(
      {
        passedWhenNotRevValues: true,
        ...(anchorConstraints
          ? {
              initialPermittedSubtreesSet: anchorConstraints.permitted,
              initialExcludedSubtreesSet: anchorConstraints.excluded,
            }
          : {}),
      },
      engine,
    );
  } catch {
    throw authFailure('untrusted_chain');
  }
}

/**
 * Validates a parsed chain (leaf first; a trust anchor in it is skipped) against trust anchors at
 * `now`, for `purpose`. Refusals: `expired` / `not_yet_valid`, else `untrusted_chain` with a
 * `detail` where one rule decided (`critical_extension`, `intermediate_not_ca`, `leaf_is_ca`,
 * `key_usage`, `extended_key_usage`, `path_length`, `name_constraints`). Revocation is not checked.
 */
export async function validateChain(
  chain: readonly ParsedCertificate[],
  anchors: readonly ParsedCertificate[],
  now: number,
  options: ValidateChainOptions = {},
): Promise<void> {
  const leaf = chain[0];
  if (!leaf) throw authFailure('untrusted_chain', 'x5c_required');
  // An anchor sent along (or appended by the TLS layer) is trusted as configured, not checked as an intermediate.
  const presented = chain.filter((c, i) => i === 0 || !anchors.some((a) => sameDer(a.der, c.der)));
  const purpose = options.purpose === undefined ? 'clientAuth' : options.purpose;
  const intermediates = [...presented.slice(1)].reverse();
  let result: pkijs.CertificateChainValidationEngineVerifyResult;
  let path: pkijs.Certificate[];
  try {
    checkPresented(presented, now, purpose);
    result = await pkijsVerify(
      leaf,
      intermediates,
      anchors.map((a) => a.cert),
      now,
    );
    path = result.certificatePath ?? [];
    const anchor = path[path.length - 1];
    const constraints = result.result && anchor ? nameConstraintsOf(anchor) : undefined;
    if (constraints && anchor) {
      // The anchor's name constraints bind what is under it: pkijs applies them only when given.
      result = await pkijsVerify(leaf, intermediates, [anchor], now, constraints);
      path = result.certificatePath ?? [];
    }
    if (result.result) checkPath(path);
  } catch (e) {
    // A certificate that parsed but whose fields do not read as they should is malformed.
    if (e instanceof WmpError) throw e;
    throw authFailure('untrusted_chain', 'malformed_certificate');
  }
  if (!result.result) {
    if (result.resultCode === 8) {
      // Only a trust anchor is left to be out of its validity: ours were all checked above.
      throw authFailure(anchors.some((a) => validity(a.cert, now) === 'not_yet_valid') ? 'not_yet_valid' : 'expired');
    }
    const detail = PKIJS_DETAILS.get(result.resultCode);
    throw detail === undefined ? authFailure('untrusted_chain') : authFailure('untrusted_chain', detail);
  }
  if (path.length === 0 || !sameCertificate(path[0]!, leaf.der)) throw authFailure('untrusted_chain');
}
