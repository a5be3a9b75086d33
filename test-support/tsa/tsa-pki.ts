// The test TSA's certificates: its own root CA and TSA certificates under it, the one a real TSA
// has (P-256, keyUsage digitalSignature, extKeyUsage timeStamping alone and critical, RFC 3161
// §2.3) and the ones a receiver must refuse. Made with the session package's test PKI (pkijs).
import { issue, newKey, type TestCert } from '../../packages/session/test/pki.js';

/** Which TSA certificate signs: the good one, or one a receiver must refuse. */
export type TsaCertificateKind =
  | 'good'
  /** Past its notAfter. */
  | 'expired'
  /** extKeyUsage serverAuth instead of timeStamping. */
  | 'wrong_eku'
  /** extKeyUsage timeStamping, but not critical (RFC 3161 §2.3 wants it critical). */
  | 'eku_not_critical'
  /** No extKeyUsage at all. */
  | 'no_eku'
  /** A good-looking TSA certificate under another root than the anchors. */
  | 'untrusted';

export interface TsaPki {
  /** The TSA anchors receivers configure. */
  readonly root: TestCert;
  readonly certificates: Readonly<Record<TsaCertificateKind, TestCert>>;
}

const CA_USAGE = ['keyCertSign', 'cRLSign'] as const;

export async function makeTsaPki(): Promise<TsaPki> {
  const root = await issue({ subject: 'WMP Test TSA Root', key: newKey('p256'), ca: true, keyUsage: CA_USAGE });
  const otherRoot = await issue({ subject: 'Other TSA Root', key: newKey('p256'), ca: true, keyUsage: CA_USAGE });
  const tsa = (subject: string, extra: Partial<Parameters<typeof issue>[0]> = {}, eku = true) =>
    issue({
      subject,
      key: newKey('p256'),
      issuer: root,
      keyUsage: ['digitalSignature'],
      ...(eku ? { extKeyUsage: ['timeStamping'] as const, criticalExtKeyUsage: true } : {}),
      ...extra,
    });
  const day = 86_400_000;
  return {
    root,
    certificates: {
      good: await tsa('WMP Test TSA'),
      expired: await tsa('WMP Test TSA (expired)', {
        notBefore: new Date(Date.now() - 30 * day),
        notAfter: new Date(Date.now() - day),
      }),
      wrong_eku: await tsa('WMP Test TSA (serverAuth)', { extKeyUsage: ['serverAuth'] }),
      eku_not_critical: await tsa('WMP Test TSA (EKU not critical)', { criticalExtKeyUsage: false }),
      no_eku: await tsa('WMP Test TSA (no EKU)', {}, false),
      untrusted: await tsa('WMP Test TSA (other root)', { issuer: otherRoot }),
    },
  };
}
