// The TLS material of the commands that connect: `--ca-file` (else $WMP_CA_FILE) to trust a
// private CA, and the client certificate for relays that ask for one: `--client-cert` with
// `--client-key`, else the X.509 certificate of the identity (wmp keys import --cert --key),
// which `--mtls` then authenticates with.
// Files are read when a command first connects, so a command that never does is not stopped by
// them; a file that cannot be used is a usage error that names the option.
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Identity, TlsOptions } from '@wmp/client-sdk';
import type { CommandContext } from './command.js';
import { UsageError } from './errors.js';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;
/** A PEM file larger than this is no certificate file. */
const MAX_PEM_BYTES = 1024 * 1024;

export async function readPem(label: string, file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`${label}: cannot read ${file} (${code})`, undefined, 'Give a readable PEM file.');
  }
  if (text.length > MAX_PEM_BYTES) throw new UsageError(`${label}: ${file} is too large for a PEM file`);
  return text;
}

function firstCertificate(label: string, file: string, pem: string): X509Certificate {
  const block = PEM_CERTIFICATE.exec(pem)?.[0];
  try {
    if (block === undefined) throw new Error('no block');
    return new X509Certificate(block);
  } catch {
    throw new UsageError(
      `${label}: ${file} holds no PEM certificate`,
      undefined,
      'Give the certificate as PEM (-----BEGIN CERTIFICATE-----).',
    );
  }
}

async function clientCertificate(ctx: Pick<CommandContext, 'tlsFlags'>, identity: Identity) {
  const { clientCert, clientKey } = ctx.tlsFlags;
  if (clientCert !== undefined && clientKey !== undefined) {
    const cert = await readPem('--client-cert', clientCert);
    const key = await readPem('--client-key', clientKey);
    const leaf = firstCertificate('--client-cert', clientCert, cert);
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(key);
    } catch {
      throw new UsageError(`--client-key: ${clientKey} holds no PEM private key`);
    }
    if (!leaf.checkPrivateKey(privateKey)) {
      throw new UsageError(`--client-key: ${clientKey} is not the key of the first certificate in ${clientCert}`);
    }
    return { cert, key };
  }
  const x509 = identity.toJSON().x509;
  return x509 ? { cert: x509.certificates_pem, key: x509.private_key_pem } : {};
}

/** What the SDK's `tls` option gets for this command line and identity. */
export async function tlsOptions(
  ctx: Pick<CommandContext, 'tlsFlags' | 'env'>,
  identity: Identity,
): Promise<TlsOptions> {
  if (ctx.tlsFlags.mtls === true && identity.x509 === undefined) {
    throw new UsageError(
      '--mtls: this identity has no X.509 certificate',
      undefined,
      'Import one first: wmp keys import --cert <chain.pem> --key <key.pem>',
    );
  }
  const fromEnv = ctx.env.WMP_CA_FILE || undefined;
  const caFile = ctx.tlsFlags.caFile ?? fromEnv;
  const label = ctx.tlsFlags.caFile !== undefined ? '--ca-file' : 'WMP_CA_FILE';
  let ca: string | undefined;
  if (caFile !== undefined) {
    ca = await readPem(label, caFile);
    firstCertificate(label, caFile, ca);
  }
  return { ...(ca === undefined ? {} : { ca }), ...(await clientCertificate(ctx, identity)) };
}
