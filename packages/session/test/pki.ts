// Test certificates, made here with pkijs (the library the x5c authenticator verifies with) over
// keys from node:crypto; node:crypto's own X509Certificate parses them in pki.test.ts as an
// independent check that they are what they claim.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

export type KeyKind = 'p256' | 'p384' | 'rsa' | 'ed25519';

export interface TestKey {
  readonly kind: KeyKind;
  readonly publicKey: KeyObject;
  readonly privateKey: KeyObject;
  readonly spki: Uint8Array<ArrayBuffer>;
  readonly pkcs8Pem: string;
}

export function newKey(kind: KeyKind): TestKey {
  const pair =
    kind === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : kind === 'ed25519'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('ec', { namedCurve: kind === 'p256' ? 'P-256' : 'P-384' });
  return {
    kind,
    publicKey: pair.publicKey,
    privateKey: pair.privateKey,
    spki: new Uint8Array(pair.publicKey.export({ type: 'spki', format: 'der' })),
    pkcs8Pem: String(pair.privateKey.export({ type: 'pkcs8', format: 'pem' })),
  };
}

export interface TestCert {
  readonly der: Uint8Array;
  readonly pem: string;
  /** Standard base64 of the DER, as in `x5c`. */
  readonly b64: string;
  readonly key: TestKey;
  readonly subject: string;
}

export interface IssueOptions {
  readonly subject: string;
  readonly key: TestKey;
  /** Signs with this certificate's key; self-signed without. */
  readonly issuer?: TestCert;
  readonly ca?: boolean;
  readonly dns?: readonly string[];
  readonly uris?: readonly string[];
  readonly ips?: readonly string[];
  /** keyUsage bits; absent: no keyUsage extension. */
  readonly keyUsage?: ReadonlyArray<'digitalSignature' | 'keyEncipherment' | 'keyCertSign' | 'cRLSign'>;
  readonly notBefore?: Date;
  readonly notAfter?: Date;
  /** basicConstraints pathLenConstraint (with `ca: true`). */
  readonly pathLength?: number;
  /** extKeyUsage purposes; absent: no extKeyUsage extension. */
  readonly extKeyUsage?: ReadonlyArray<keyof typeof KEY_PURPOSES>;
  /** Marks extKeyUsage critical (RFC 3161 §2.3 wants it so for a TSA). */
  readonly criticalExtKeyUsage?: boolean;
  /** nameConstraints: permitted and excluded dNSName subtrees. */
  readonly permittedDns?: readonly string[];
  readonly excludedDns?: readonly string[];
  /** A critical extension of an OID nobody knows (RFC 5280 §4.2: it must be refused). */
  readonly unknownCritical?: boolean;
}

export const KEY_PURPOSES = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  emailProtection: '1.3.6.1.5.5.7.3.4',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  anyExtendedKeyUsage: '2.5.29.37.0',
} as const;

const USAGE_BITS = { digitalSignature: 0x80, keyEncipherment: 0x20, keyCertSign: 0x04, cRLSign: 0x02 } as const;
let serial = 1;

async function signingKey(key: TestKey): Promise<{ key: CryptoKey; hash: string }> {
  const pkcs8 = new Uint8Array(key.privateKey.export({ type: 'pkcs8', format: 'der' }));
  if (key.kind === 'rsa') {
    return {
      key: await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, [
        'sign',
      ]),
      hash: 'SHA-256',
    };
  }
  if (key.kind === 'ed25519') throw new Error('pkijs does not sign certificates with Ed25519');
  const curve = key.kind === 'p256' ? 'P-256' : 'P-384';
  return {
    key: await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'ECDSA', namedCurve: curve }, false, ['sign']),
    hash: key.kind === 'p256' ? 'SHA-256' : 'SHA-384',
  };
}

function name(cn: string): pkijs.RelativeDistinguishedNames {
  return new pkijs.RelativeDistinguishedNames({
    typesAndValues: [new pkijs.AttributeTypeAndValue({ type: '2.5.4.3', value: new asn1js.Utf8String({ value: cn }) })],
  });
}

function ipBytes(ip: string): Uint8Array {
  return new Uint8Array(ip.split('.').map(Number));
}

export function toPem(der: Uint8Array, label = 'CERTIFICATE'): string {
  const b64 = Buffer.from(der).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;
}

export async function issue(o: IssueOptions): Promise<TestCert> {
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1js.Integer({ value: serial++ });
  cert.subject = name(o.subject);
  cert.issuer = name(o.issuer ? o.issuer.subject : o.subject);
  cert.notBefore.value = o.notBefore ?? new Date(Date.now() - 3600_000);
  cert.notAfter.value = o.notAfter ?? new Date(Date.now() + 365 * 86400_000);
  // UTCTime holds years up to 2049; later ones are GeneralizedTime (RFC 5280 §4.1.2.5).
  for (const t of [cert.notBefore, cert.notAfter]) t.type = t.value.getUTCFullYear() >= 2050 ? 1 : 0;
  cert.subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(o.key.spki);
  const extensions: pkijs.Extension[] = [];
  if (o.ca !== undefined) {
    extensions.push(
      new pkijs.Extension({
        extnID: '2.5.29.19',
        critical: true,
        extnValue: new pkijs.BasicConstraints({
          cA: o.ca,
          ...(o.pathLength === undefined ? {} : { pathLenConstraint: o.pathLength }),
        })
          .toSchema()
          .toBER(false),
      }),
    );
  }
  if (o.keyUsage) {
    const bits = o.keyUsage.reduce((b, u) => b | USAGE_BITS[u], 0);
    extensions.push(
      new pkijs.Extension({
        extnID: '2.5.29.15',
        critical: true,
        extnValue: new asn1js.BitString({ valueHex: new Uint8Array([bits]).buffer }).toBER(false),
      }),
    );
  }
  if (o.extKeyUsage) {
    extensions.push(
      new pkijs.Extension({
        extnID: '2.5.29.37',
        critical: o.criticalExtKeyUsage === true,
        extnValue: new pkijs.ExtKeyUsage({ keyPurposes: o.extKeyUsage.map((p) => KEY_PURPOSES[p]) })
          .toSchema()
          .toBER(false),
      }),
    );
  }
  if (o.permittedDns || o.excludedDns) {
    const subtrees = (names: readonly string[]) =>
      names.map((value) => new pkijs.GeneralSubtree({ base: new pkijs.GeneralName({ type: 2, value }) }));
    extensions.push(
      new pkijs.Extension({
        extnID: '2.5.29.30',
        critical: true,
        extnValue: new pkijs.NameConstraints({
          ...(o.permittedDns ? { permittedSubtrees: subtrees(o.permittedDns) } : {}),
          ...(o.excludedDns ? { excludedSubtrees: subtrees(o.excludedDns) } : {}),
        })
          .toSchema()
          .toBER(false),
      }),
    );
  }
  if (o.unknownCritical) {
    extensions.push(
      new pkijs.Extension({
        extnID: '1.3.6.1.4.1.99999.1',
        critical: true,
        extnValue: new asn1js.Null().toBER(false),
      }),
    );
  }
  const names = [
    ...(o.dns ?? []).map((value) => new pkijs.GeneralName({ type: 2, value })),
    ...(o.uris ?? []).map((value) => new pkijs.GeneralName({ type: 6, value })),
    ...(o.ips ?? []).map(
      (ip) => new pkijs.GeneralName({ type: 7, value: new asn1js.OctetString({ valueHex: ipBytes(ip).buffer }) }),
    ),
  ];
  if (names.length > 0) {
    extensions.push(
      new pkijs.Extension({
        extnID: '2.5.29.17',
        critical: false,
        extnValue: new pkijs.AltName({ altNames: names }).toSchema().toBER(false),
      }),
    );
  }
  if (extensions.length > 0) cert.extensions = extensions;
  const signer = await signingKey(o.issuer ? o.issuer.key : o.key);
  await cert.sign(signer.key, signer.hash);
  const der = new Uint8Array(cert.toSchema(true).toBER(false));
  return { der, pem: toPem(der), b64: Buffer.from(der).toString('base64'), key: o.key, subject: o.subject };
}

/** The test PKI: a root, an intermediate, leaves of every kind, and the bad ones. */
export interface TestPki {
  readonly root: TestCert;
  readonly intermediate: TestCert;
  readonly dnsLeaf: TestCert; // P-256, dns wallet.example.com
  readonly uriLeaf: TestCert; // RSA, uri https://issuer.example.eu/wmp
  readonly edLeaf: TestCert; // Ed25519, dns ed.example.com
  readonly p384Leaf: TestCert; // P-384, dns p384.example.com
  readonly expiredLeaf: TestCert;
  readonly futureLeaf: TestCert;
  readonly noSignLeaf: TestCert; // keyUsage without digitalSignature
  readonly foreignLeaf: TestCert; // from another CA
  readonly foreignRoot: TestCert;
  /** A CA with the intermediate's name and another key. */
  readonly impostorIntermediate: TestCert;
  readonly impostorLeaf: TestCert;
  /** An intermediate that is not a CA (cA false) and a leaf under it. */
  readonly notCa: TestCert;
  readonly underNotCa: TestCert;
  readonly relayLeaf: TestCert; // P-256, dns relay.example.net (a responder)
}

const leafUsage = ['digitalSignature'] as const;

export async function makePki(): Promise<TestPki> {
  const root = await issue({
    subject: 'WMP Test Root',
    key: newKey('p256'),
    ca: true,
    keyUsage: ['keyCertSign', 'cRLSign'],
  });
  const intermediate = await issue({
    subject: 'WMP Test Intermediate',
    key: newKey('rsa'),
    issuer: root,
    ca: true,
    keyUsage: ['keyCertSign', 'cRLSign'],
  });
  const leaf = (o: Omit<IssueOptions, 'issuer'> & { issuer?: TestCert }) =>
    issue({ issuer: intermediate, keyUsage: leafUsage, ...o });
  const foreignRoot = await issue({ subject: 'Other Root', key: newKey('p256'), ca: true, keyUsage: ['keyCertSign'] });
  const impostorIntermediate = await issue({
    subject: 'WMP Test Intermediate',
    key: newKey('p256'),
    issuer: foreignRoot,
    ca: true,
    keyUsage: ['keyCertSign'],
  });
  const notCa = await issue({
    subject: 'Not A CA',
    key: newKey('p256'),
    issuer: intermediate,
    ca: false,
    keyUsage: leafUsage,
  });
  return {
    root,
    intermediate,
    dnsLeaf: await leaf({ subject: 'wallet', key: newKey('p256'), dns: ['wallet.example.com', 'alt.example.com'] }),
    uriLeaf: await leaf({ subject: 'issuer', key: newKey('rsa'), uris: ['https://issuer.example.eu/wmp'] }),
    edLeaf: await leaf({ subject: 'ed', key: newKey('ed25519'), dns: ['ed.example.com'] }),
    p384Leaf: await leaf({ subject: 'p384', key: newKey('p384'), dns: ['p384.example.com'] }),
    expiredLeaf: await leaf({
      subject: 'expired',
      key: newKey('p256'),
      dns: ['expired.example.com'],
      notBefore: new Date(Date.now() - 10 * 86400_000),
      notAfter: new Date(Date.now() - 86400_000),
    }),
    futureLeaf: await leaf({
      subject: 'future',
      key: newKey('p256'),
      dns: ['future.example.com'],
      notBefore: new Date(Date.now() + 86400_000),
    }),
    noSignLeaf: await leaf({
      subject: 'nosign',
      key: newKey('p256'),
      dns: ['nosign.example.com'],
      keyUsage: ['keyEncipherment'],
    }),
    foreignLeaf: await issue({
      subject: 'foreign',
      key: newKey('p256'),
      issuer: foreignRoot,
      dns: ['wallet.example.com'],
      keyUsage: leafUsage,
    }),
    foreignRoot,
    impostorIntermediate,
    impostorLeaf: await issue({
      subject: 'impostor',
      key: newKey('p256'),
      issuer: impostorIntermediate,
      dns: ['wallet.example.com'],
      keyUsage: leafUsage,
    }),
    notCa,
    underNotCa: await issue({
      subject: 'under',
      key: newKey('p256'),
      issuer: notCa,
      dns: ['under.example.com'],
      keyUsage: leafUsage,
    }),
    relayLeaf: await leaf({ subject: 'relay', key: newKey('p256'), dns: ['relay.example.net'] }),
  };
}
