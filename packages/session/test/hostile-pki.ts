// Hostile certificates under the test PKI's root (pki.ts): chains that break a path length, key
// purpose, basicConstraints, name constraint or critical-extension rule of RFC 5280, beside ones
// that keep them. Each case says what our verifier answers and whether `openssl verify` agrees.
import { issue, newKey, type TestCert, type TestPki } from './pki.js';

/** One chain and the verdict on it. */
export interface ChainCase {
  readonly name: string;
  /** As sent: leaf first, without the anchor. */
  readonly chain: readonly TestCert[];
  readonly anchors: readonly TestCert[];
  /** An identifier the leaf names, so that only the chain decides. */
  readonly sender: string;
  /** `ok`, or the -31002 data of the refusal. */
  readonly expected: 'ok' | { readonly reason: string; readonly detail?: string };
  /** false where openssl accepts what we refuse on purpose (said why in `name`). */
  readonly opensslAgrees?: false;
}

export interface HostilePki {
  /** For senders (`x5c`, `mtls`: clientAuth when an EKU is present). */
  readonly senderCases: readonly ChainCase[];
  /** For responders (a relay's `x5c` answer: serverAuth when an EKU is present). */
  readonly responderCases: readonly ChainCase[];
  /** A leaf with the dNSName `*.example.com`, and one with `Upper.Example.COM`. */
  readonly wildcardLeaf: TestCert;
  readonly upperCaseLeaf: TestCert;
}

const CA_USAGE = ['keyCertSign', 'cRLSign'] as const;
const LEAF_USAGE = ['digitalSignature'] as const;
const refused = (detail: string) => ({ reason: 'untrusted_chain', detail });

export async function makeHostilePki(pki: TestPki): Promise<HostilePki> {
  const { root, intermediate } = pki;
  const ca = (subject: string, issuer: TestCert, extra: Partial<Parameters<typeof issue>[0]> = {}) =>
    issue({ subject, key: newKey('p256'), issuer, ca: true, keyUsage: CA_USAGE, ...extra });
  const leaf = (name: string, issuer: TestCert, extra: Partial<Parameters<typeof issue>[0]> = {}) =>
    issue({ subject: name, key: newKey('p256'), issuer, dns: [name], keyUsage: LEAF_USAGE, ...extra });
  const dns = (name: string) => `x509:san:dns:${name}`;

  // The chain of issue #23: a pathlen:0 CA -> a sub-CA -> a leaf (`openssl verify` refuses it).
  const pathLen0 = await ca('Path Length 0 CA', root, { pathLength: 0 });
  const subCa = await ca('Sub CA', pathLen0);
  const underSubCa = await leaf('sub.example.com', subCa);
  // pathlen:1 leaves room for exactly that one sub-CA.
  const pathLen1 = await ca('Path Length 1 CA', root, { pathLength: 1 });
  const subCa1 = await ca('Sub CA of 1', pathLen1);
  const underSubCa1 = await leaf('sub1.example.com', subCa1);
  // pathlen:0 directly above the leaf is within it.
  const underPathLen0 = await leaf('direct.example.com', pathLen0);
  // A trust anchor's own pathlen:0 forbids any intermediate under it.
  const rootPathLen0 = await issue({
    subject: 'Root Path Length 0',
    key: newKey('p256'),
    ca: true,
    pathLength: 0,
    keyUsage: CA_USAGE,
  });
  const underRootPathLen0 = await ca('Under Root 0', rootPathLen0);
  const leafUnderRoot0 = await leaf('root0.example.com', underRootPathLen0);

  const serverOnly = await leaf('server-only.example.com', intermediate, { extKeyUsage: ['serverAuth'] });
  const clientOnly = await leaf('client-only.example.com', intermediate, { extKeyUsage: ['clientAuth'] });
  const both = await leaf('both.example.com', intermediate, { extKeyUsage: ['serverAuth', 'clientAuth'] });
  const anyEku = await leaf('any-eku.example.com', intermediate, { extKeyUsage: ['anyExtendedKeyUsage'] });
  const emailOnly = await leaf('email.example.com', intermediate, { extKeyUsage: ['emailProtection'] });
  const caLeaf = await leaf('ca-leaf.example.com', intermediate, {
    ca: true,
    keyUsage: ['digitalSignature', 'keyCertSign'],
  });
  // A CA limited to serverAuth issues a leaf without EKU: the CA's limit carries down.
  const serverCa = await ca('Server Only CA', root, { extKeyUsage: ['serverAuth'] });
  const underServerCa = await leaf('under-server-ca.example.com', serverCa);

  const constrained = await ca('Constrained CA', root, {
    permittedDns: ['example.com'],
    excludedDns: ['bad.example.com'],
  });
  const inside = await leaf('in.example.com', constrained);
  const outside = await leaf('evil.test', constrained);
  const excluded = await leaf('x.bad.example.com', constrained);
  // Two constraints in one path: a name must be within both (RFC 5280 §6.1.4 (g): their intersection).
  const nested = await ca('Nested Constrained CA', constrained, { permittedDns: ['other.test'] });
  const underNested = await leaf('x.other.test', nested);

  // Nested constraints that do nest: the intersection is a.example.com, but pkijs would take the
  // union, so any two permitted subtrees of one name form in a path are refused.
  const nestedInside = await ca('Nested Inside CA', constrained, { permittedDns: ['a.example.com'] });
  const underNestedInside = await leaf('x.a.example.com', nestedInside);
  // A trust anchor's own name constraints bind everything under it.
  const constrainedRoot = await issue({
    subject: 'Constrained Root',
    key: newKey('p256'),
    ca: true,
    keyUsage: CA_USAGE,
    permittedDns: ['example.com'],
  });
  const underConstrainedRoot = await ca('Under Constrained Root', constrainedRoot);
  const rootInside = await leaf('root-in.example.com', underConstrainedRoot);
  const rootOutside = await leaf('root-out.test', underConstrainedRoot);

  const unknownCritical = await leaf('critical.example.com', intermediate, { unknownCritical: true });

  const senderCases: ChainCase[] = [
    {
      name: 'a pathlen:0 CA above a sub-CA',
      chain: [underSubCa, subCa, pathLen0],
      anchors: [root],
      sender: dns('sub.example.com'),
      expected: refused('path_length'),
    },
    {
      name: 'a pathlen:1 CA above a sub-CA',
      chain: [underSubCa1, subCa1, pathLen1],
      anchors: [root],
      sender: dns('sub1.example.com'),
      expected: 'ok',
    },
    {
      name: 'a pathlen:0 CA right above the leaf',
      chain: [underPathLen0, pathLen0],
      anchors: [root],
      sender: dns('direct.example.com'),
      expected: 'ok',
    },
    {
      name: 'a trust anchor with pathlen:0 above an intermediate',
      chain: [leafUnderRoot0, underRootPathLen0],
      anchors: [rootPathLen0],
      sender: dns('root0.example.com'),
      expected: refused('path_length'),
    },
    {
      name: 'a leaf whose only EKU is serverAuth',
      chain: [serverOnly, intermediate],
      anchors: [root],
      sender: dns('server-only.example.com'),
      expected: refused('extended_key_usage'),
    },
    {
      name: 'a leaf with the clientAuth EKU',
      chain: [clientOnly, intermediate],
      anchors: [root],
      sender: dns('client-only.example.com'),
      expected: 'ok',
    },
    {
      name: 'a leaf with serverAuth and clientAuth',
      chain: [both, intermediate],
      anchors: [root],
      sender: dns('both.example.com'),
      expected: 'ok',
    },
    {
      name: 'a leaf whose only EKU is anyExtendedKeyUsage',
      chain: [anyEku, intermediate],
      anchors: [root],
      sender: dns('any-eku.example.com'),
      expected: refused('extended_key_usage'),
    },
    {
      name: 'a leaf whose only EKU is emailProtection',
      chain: [emailOnly, intermediate],
      anchors: [root],
      sender: dns('email.example.com'),
      expected: refused('extended_key_usage'),
    },
    {
      name: 'a CA:TRUE leaf (openssl accepts it as an end entity; we never take a CA as an identity)',
      chain: [caLeaf, intermediate],
      anchors: [root],
      sender: dns('ca-leaf.example.com'),
      expected: refused('leaf_is_ca'),
      opensslAgrees: false,
    },
    {
      name: 'an intermediate limited to serverAuth',
      chain: [underServerCa, serverCa],
      anchors: [root],
      sender: dns('under-server-ca.example.com'),
      expected: refused('extended_key_usage'),
    },
    {
      name: 'a name within the CA’s permitted subtree',
      chain: [inside, constrained],
      anchors: [root],
      sender: dns('in.example.com'),
      expected: 'ok',
    },
    {
      name: 'a name outside the CA’s permitted subtree',
      chain: [outside, constrained],
      anchors: [root],
      sender: dns('evil.test'),
      expected: refused('name_constraints'),
    },
    {
      name: 'a name in the CA’s excluded subtree',
      chain: [excluded, constrained],
      anchors: [root],
      sender: dns('x.bad.example.com'),
      expected: refused('name_constraints'),
    },
    {
      name: 'a name permitted by the lower CA but not by the upper one',
      chain: [underNested, nested, constrained],
      anchors: [root],
      sender: dns('x.other.test'),
      expected: refused('name_constraints'),
    },
    {
      name: 'two permitted dNSName subtrees in one path (openssl takes their intersection; pkijs could not, so we refuse)',
      chain: [underNestedInside, nestedInside, constrained],
      anchors: [root],
      sender: dns('x.a.example.com'),
      expected: refused('name_constraints'),
      opensslAgrees: false,
    },
    {
      name: 'a name within a trust anchor’s permitted subtree',
      chain: [rootInside, underConstrainedRoot],
      anchors: [constrainedRoot],
      sender: dns('root-in.example.com'),
      expected: 'ok',
    },
    {
      name: 'a name outside a trust anchor’s permitted subtree',
      chain: [rootOutside, underConstrainedRoot],
      anchors: [constrainedRoot],
      sender: dns('root-out.test'),
      expected: refused('name_constraints'),
    },
    {
      name: 'a leaf with an unknown critical extension',
      chain: [unknownCritical, intermediate],
      anchors: [root],
      sender: dns('critical.example.com'),
      expected: refused('critical_extension'),
    },
  ];

  const relayClientOnly = await leaf('relay-client.example.net', intermediate, { extKeyUsage: ['clientAuth'] });
  const relayServer = await leaf('relay-server.example.net', intermediate, { extKeyUsage: ['serverAuth'] });
  const responderCases: ChainCase[] = [
    {
      name: 'a relay whose only EKU is clientAuth',
      chain: [relayClientOnly, intermediate],
      anchors: [root],
      sender: dns('relay-client.example.net'),
      expected: refused('extended_key_usage'),
    },
    {
      name: 'a relay with the serverAuth EKU',
      chain: [relayServer, intermediate],
      anchors: [root],
      sender: dns('relay-server.example.net'),
      expected: 'ok',
    },
    {
      name: 'a relay without EKU',
      chain: [pki.relayLeaf, intermediate],
      anchors: [root],
      sender: dns('relay.example.net'),
      expected: 'ok',
    },
    {
      name: 'a relay under a pathlen:0 CA and a sub-CA',
      chain: [underSubCa, subCa, pathLen0],
      anchors: [root],
      sender: dns('sub.example.com'),
      expected: refused('path_length'),
    },
  ];

  return {
    senderCases,
    responderCases,
    wildcardLeaf: await issue({
      subject: 'wildcard',
      key: newKey('p256'),
      issuer: intermediate,
      dns: ['*.example.com'],
      keyUsage: LEAF_USAGE,
    }),
    upperCaseLeaf: await issue({
      subject: 'upper',
      key: newKey('p256'),
      issuer: intermediate,
      dns: ['Upper.Example.COM'],
      keyUsage: LEAF_USAGE,
    }),
  };
}
