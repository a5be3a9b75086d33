// wmp keys new|show|export|import: the identity in the home (an Ed25519 signing key named by its
// did:key, and an X25519 key that sealed mail is encrypted to).
import { readFile, writeFile } from 'node:fs/promises';
import { Identity, type IdentityJson, Mailbox } from '@wmp/client-sdk';
import type { CommandSpec, GroupSpec } from '../command.js';
import { CliError, NotFoundError } from '../errors.js';
import { readStdin } from '../stdin.js';

const force = { kind: 'flag', help: 'replace the identity this home already has (the old keys are lost)' } as const;

function describe(identity: Identity, home: string) {
  return { did: identity.did, signing_key: identity.signingKey, enc_key: identity.encKey, home };
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
  summary: 'take an identity from a file written by keys export',
  args: [{ name: 'file', kind: 'path', help: 'the exported JSON file, or - for standard input' }],
  options: { force },
  examples: ['wmp --home ./laptop keys import alice-keys.json', 'cat backup.json | wmp keys import -'],
  async run({ home, args, options, out, stdin }) {
    const file = args.file as string;
    let text: string;
    try {
      text = file === '-' ? await readStdin(stdin) : await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT')
        throw new NotFoundError(`no file ${file}`, 'Give the file written by: wmp keys export --out <file>');
      throw new CliError(`cannot read ${file} (${code ?? 'error'})`, 'Check the path and permissions.');
    }
    let identity: Identity;
    try {
      identity = Identity.fromJSON(JSON.parse(text) as IdentityJson);
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
    out.result(describe(identity, home.dir), () => `imported ${identity.did} into ${home.dir}`);
  },
};

export const keysCommands: GroupSpec = {
  name: 'keys',
  summary: 'your identity: make, show, export and import keys',
  commands: [keysNew, keysShow, keysExport, keysImport],
};
