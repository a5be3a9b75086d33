// wmp keys new|show|export|import: the identity in the home (an Ed25519 signing key named by its
// did:key, and an X25519 key that sealed mail is encrypted to).
import { readFile, writeFile } from 'node:fs/promises';
import { Identity, type IdentityJson, Mailbox } from '@wmp/client-sdk';
import type { CommandSpec, GroupSpec } from '../command.js';
import { CliError, NotFoundError, UsageError } from '../errors.js';
import { readStdin } from '../stdin.js';

const force = { kind: 'flag', help: 'replace the identity this home already has (the old keys are lost)' } as const;

function describe(identity: Identity, home: string) {
  return {
    did: identity.did,
    ...(identity.x509 ? { id: identity.id } : {}),
    signing_key: identity.signingKey,
    enc_key: identity.encKey,
    home,
  };
}

/** Reads a file the user named; a missing or unreadable one is a CLI error naming it. */
async function readUserFile(file: string, stdin: NodeJS.ReadableStream, hint: string): Promise<string> {
  try {
    return file === '-' ? await readStdin(stdin) : await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new NotFoundError(`no file ${file}`, hint);
    throw new CliError(`cannot read ${file} (${code ?? 'error'})`, 'Check the path and permissions.');
  }
}

/**
 * `keys import --cert --key`: an X.509 chain and its key become the home's WMP identity (x5c);
 * the home's signing and sealing keys stay (cards and sealed mail), or are made when it has none.
 */
async function importX509(ctx: Parameters<CommandSpec['run']>[0], certFile: string, keyFile: string): Promise<void> {
  const { home, options, out, stdin } = ctx;
  const hint = 'Give a PEM certificate chain (leaf first) and its PKCS#8 private key.';
  const certificatesPem = await readUserFile(certFile, stdin, hint);
  const privateKeyPem = await readUserFile(keyFile, stdin, hint);
  const existing = await home.findIdentity();
  let identity: Identity;
  try {
    identity = await Identity.fromX509({ certificatesPem, privateKeyPem }, existing);
  } catch {
    throw new CliError(
      `${certFile} and ${keyFile} are not a certificate chain and the private key of its first certificate`,
      hint,
    );
  }
  if (existing?.x509 && existing.id !== identity.id && options.force !== true) {
    throw new CliError(
      `${home.dir} already has another X.509 identity (${existing.id})`,
      'Use another --home, or replace it with --force.',
    );
  }
  await identity.save(home.store());
  out.result(describe(identity, home.dir), () => [
    `imported ${identity.id} into ${home.dir}`,
    `  signing key  ${identity.signingKey} (cards and sealed mail)`,
  ]);
}

const keysNew: CommandSpec = {
  path: ['keys', 'new'],
  summary: 'make a new identity (signing key and sealing key) in the home',
  description: [
    'Writes a fresh Ed25519 signing key (your did:key) and X25519 key (what sealed mail to you is',
    'encrypted to) into the home. Refuses to replace an existing identity unless --force is given.',
  ],
  options: { force },
  examples: ['wmp keys new', 'wmp --home ./alice keys new', 'wmp keys new --force'],
  async run({ home, options, out }) {
    const existing = await home.findIdentity();
    if (existing && options.force !== true) {
      throw new CliError(
        `${home.dir} already has an identity (${existing.did})`,
        'Keep it (wmp keys show), or replace it with: wmp keys new --force (export the old one first: wmp keys export --out old.json)',
      );
    }
    const identity = Identity.generate();
    await identity.save(home.store());
    out.result(describe(identity, home.dir), () => [
      `new identity ${identity.did}`,
      `  signing key  ${identity.signingKey}`,
      `  sealing key  ${identity.encKey}`,
      `  home         ${home.dir}`,
      'Next: wmp card publish --relay <url>',
    ]);
  },
};

const keysShow: CommandSpec = {
  path: ['keys', 'show'],
  summary: 'show your did:key, public keys and card relays',
  examples: ['wmp keys show', 'wmp --json keys show'],
  async run({ home, out }) {
    const identity = await home.identity();
    const card = await new Mailbox({ identity, store: home.store() }).card();
    const value = { ...describe(identity, home.dir), relays: card?.relays ?? [] };
    out.result(value, () => [
      ...(identity.x509 ? [`id           ${identity.id} (X.509)`] : []),
      `did          ${identity.did}`,
      `signing key  ${identity.signingKey}`,
      `sealing key  ${identity.encKey}`,
      `home         ${home.dir}`,
      `relays       ${card ? card.relays.join(' ') : '(no card yet: wmp card publish --relay <url>)'}`,
    ]);
  },
};

const keysExport: CommandSpec = {
  path: ['keys', 'export'],
  summary: 'write your secret keys as JSON (to back them up or move them)',
  description: [
    'The output holds your SECRET keys: whoever has it can read your mail and act as you. Without',
    '--out it goes to standard output; with --out the file is created with mode 0600.',
  ],
  options: {
    out: { kind: 'path', help: 'write to this file instead of standard output (never overwritten)' },
  },
  examples: ['wmp keys export --out alice-keys.json', 'wmp keys export > backup.json'],
  async run({ home, options, out }) {
    const identity = await home.identity();
    const text = `${JSON.stringify(identity.toJSON(), null, 2)}\n`;
    const file = options.out as string | undefined;
    if (file === undefined || file === '-') {
      out.note('wmp: this is your SECRET key material; keep it safe');
      out.raw(out.json ? `${JSON.stringify(identity.toJSON())}\n` : text);
      return;
    }
    try {
      await writeFile(file, text, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new CliError(
        `cannot write ${file} (${code ?? 'error'})`,
        code === 'EEXIST'
          ? 'The file exists and is never overwritten; choose another name.'
          : 'Check the path and permissions.',
      );
    }
    out.result({ did: identity.did, file }, () => `wrote the secret keys of ${identity.did} to ${file} (mode 0600)`);
  },
};

const keysImport: CommandSpec = {
  path: ['keys', 'import'],
  summary: 'take an identity from a file written by keys export, or an X.509 certificate and key',
  description: [
    'With a file: the identity keys export wrote. With --cert and --key: a PEM certificate chain',
    '(leaf first) and the PKCS#8 key of its leaf; the relay then knows you as x509:san:dns:<name>',
    '(the first DNS name of the certificate) and you authenticate with the certificate (x5c). The',
    "home's signing and sealing keys stay for cards and sealed mail (new ones if it has none).",
  ],
  args: [{ name: 'file', kind: 'path', optional: true, help: 'the exported JSON file, or - for standard input' }],
  options: {
    force,
    cert: { kind: 'path', help: 'PEM certificate chain, leaf first (with --key)' },
    key: { kind: 'path', help: 'PEM PKCS#8 private key of the leaf (with --cert)' },
  },
  examples: [
    'wmp --home ~/.wmp-laptop keys import alice-keys.json',
    'cat backup.json | wmp keys import -',
    'wmp keys import --cert wallet-chain.pem --key wallet-key.pem',
  ],
  async run(ctx) {
    const { home, args, options, out, stdin } = ctx;
    const cert = options.cert as string | undefined;
    const key = options.key as string | undefined;
    const file = args.file as string | undefined;
    if (cert !== undefined || key !== undefined) {
      if (cert === undefined || key === undefined || file !== undefined) {
        throw new UsageError('--cert and --key go together, without a file', 'keys import');
      }
      return importX509(ctx, cert, key);
    }
    if (file === undefined) throw new UsageError('give the exported file, or --cert and --key', 'keys import');
    const text = await readUserFile(file, stdin, 'Give the file written by: wmp keys export --out <file>');
    let identity: Identity;
    try {
      identity = await Identity.restore(JSON.parse(text) as IdentityJson);
    } catch {
      throw new CliError(
        `${file} is not an identity written by wmp keys export`,
        'Give the exported JSON file unchanged.',
      );
    }
    const existing = await home.findIdentity();
    if (existing && existing.did !== identity.did && options.force !== true) {
      throw new CliError(
        `${home.dir} already has another identity (${existing.did})`,
        'Use another --home, or replace it with --force (export the old one first).',
      );
    }
    await identity.save(home.store());
    out.result(describe(identity, home.dir), () => `imported ${identity.id} into ${home.dir}`);
  },
};

export const keysCommands: GroupSpec = {
  name: 'keys',
  summary: 'your identity: make, show, export and import keys',
  commands: [keysNew, keysShow, keysExport, keysImport],
};
