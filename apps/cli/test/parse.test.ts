// The parser and help generator on a small table of their own (no SDK, no processes).
import { didJwkFromPublicKey, generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { buildTable, type CommandSpec } from '../src/command.js';
import { ExitCode, UsageError } from '../src/errors.js';
import { commandHelp, topHelp } from '../src/help.js';
import { parseCommandLine, wantsJson } from '../src/parse.js';
import { CONVERT, ValueError } from '../src/values.js';

const noop = async () => {};
const send: CommandSpec = {
  path: ['send'],
  summary: 'send a message',
  args: [
    { name: 'did', kind: 'did', help: 'recipient' },
    { name: 'text', rest: true, help: 'the message' },
  ],
  options: {
    relay: { kind: 'url', help: 'relay', multiple: true },
    count: { kind: 'int', help: 'how many', min: 1, max: 5 },
    wait: { kind: 'flag', help: 'wait' },
  },
  examples: ['wmp send did:key:z6Mk... hello --relay http://127.0.0.1:8080'],
  run: noop,
};
const keysNew: CommandSpec = { path: ['keys', 'new'], summary: 'new keys', run: noop };
const keysShow: CommandSpec = { path: ['keys', 'show'], summary: 'show keys', run: noop };
const table = buildTable([{ name: 'keys', summary: 'keys', commands: [keysNew, keysShow] }, send]);
const DID = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
const MK = 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';

function usage(argv: string[]): UsageError {
  try {
    parseCommandLine(argv, table);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(ExitCode.usage);
    return error as UsageError;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
}

describe('parseCommandLine', () => {
  it('finds a command, its arguments (rest joined) and typed options, with global options anywhere', () => {
    const parsed = parseCommandLine(
      ['--home', '/h', 'send', MK, 'hello', 'there', '--relay', 'http://127.0.0.1:9/', '--count=3', '--json', '--wait'],
      table,
    );
    expect(parsed.kind).toBe('run');
    if (parsed.kind !== 'run') return;
    expect(parsed.spec).toBe(send);
    expect(parsed.args).toEqual({ did: DID, text: 'hello there' });
    expect(parsed.options).toEqual({ relay: ['http://127.0.0.1:9'], count: 3, wait: true });
    expect(parsed.globals).toEqual({ home: '/h', json: true, tls: {} });
  });

  it('dispatches group commands and asks for help at every level', () => {
    const run = parseCommandLine(['keys', 'show'], table);
    expect(run.kind === 'run' && run.spec).toBe(keysShow);
    expect(parseCommandLine([], table)).toMatchObject({ kind: 'no-command' });
    expect(parseCommandLine(['--help'], table)).toMatchObject({ kind: 'help', topic: { kind: 'top' } });
    expect(parseCommandLine(['keys', '--help'], table)).toMatchObject({ kind: 'help', topic: { kind: 'group' } });
    expect(parseCommandLine(['keys', 'new', '-h'], table)).toMatchObject({
      kind: 'help',
      topic: { kind: 'command', spec: keysNew },
    });
    expect(parseCommandLine(['--version'], table)).toMatchObject({ kind: 'version' });
  });

  it('text after -- may start with a dash', () => {
    const parsed = parseCommandLine(['send', DID, '--', '-1', '--not-an-option'], table);
    expect(parsed.kind === 'run' && parsed.args.text).toBe('-1 --not-an-option');
  });

  it('refuses what does not fit, naming it and pointing at help', () => {
    expect(usage(['sned']).message).toBe('unknown command "sned"');
    expect(usage(['sned']).hint).toBe('Did you mean "send"? Run: wmp --help');
    expect(usage(['keys']).message).toBe('"keys" needs a subcommand: new, show');
    expect(usage(['keys', 'nwe']).hint).toContain('"keys new"');
    expect(usage(['send', DID]).message).toBe('missing <text>');
    expect(usage(['send']).message).toBe('missing <did>');
    expect(usage(['send', 'bob', 'hi']).message).toMatch(/^<did>: "bob" is not an Ed25519 did:key/);
    expect(usage(['send', DID, 'hi', '--count', '9']).message).toBe('--count: "9" is not a whole number from 1 to 5');
    expect(usage(['send', DID, 'hi', '--relay', 'http://example.com']).message).toMatch(/^--relay: .*https:\/\//);
    expect(usage(['send', DID, 'hi', '--relay']).message).toBe('--relay needs a value');
    expect(usage(['send', DID, 'hi', '--wait=yes']).message).toBe('--wait takes no value');
    expect(usage(['send', DID, 'hi', '--nope']).message).toBe('unknown option --nope');
    expect(usage(['send', DID, 'hi', '--nope']).hint).toBe('Run: wmp send --help');
    expect(usage(['keys', 'show', 'extra']).message).toBe('unexpected argument "extra"');
    expect(usage(['--relay', 'x', 'send']).message).toMatch(/--relay goes after the command/);
    expect(usage(['--home', '', 'keys', 'show']).message).toMatch(/--home: is empty/);
  });

  it('takes a word that starts with a dash as the value of an option before it (a base64url hash may)', () => {
    expect(usage(['send', DID, 'hi', '--count', '-3']).message).toBe('--count: "-3" is not a whole number from 1 to 5');
  });

  it('wantsJson sees --json before --', () => {
    expect(wantsJson(['keys', '--json'])).toBe(true);
    expect(wantsJson(['send', DID, '--', '--json'])).toBe(false);
  });
});

describe('recipients and identifiers', () => {
  const to = (text: string) => CONVERT.recipient(text, {});
  const refused = (kind: 'recipient' | 'identifier' | 'did', text: string): string => {
    try {
      CONVERT[kind](text, {});
    } catch (error) {
      expect(error).toBeInstanceOf(ValueError);
      return (error as Error).message;
    }
    throw new Error(`${text} was accepted`);
  };

  it('takes did:key (and its Multikey), did:jwk, did:web and x509 identifiers, checked', () => {
    expect(to(MK)).toBe(DID);
    expect(to(DID)).toBe(DID);
    const jwk = didJwkFromPublicKey(generateKeypair().publicKey);
    expect(to(jwk)).toBe(jwk);
    for (const web of ['did:web:example.com', 'did:web:example.com:users:bob', 'did:web:localhost%3A8443']) {
      expect(to(web)).toBe(web);
    }
    expect(to('x509:san:dns:wallet.example.com')).toBe('x509:san:dns:wallet.example.com');
    expect(CONVERT.identifier('https://example.com/bob', {})).toBe('https://example.com/bob');
    expect(CONVERT.identifier(DID, {})).toBe(DID);
  });

  it('refuses a mistyped did:key that does not decode, saying it looks like one', () => {
    // A character dropped, mistyped as a non-base58 one, added; a placeholder copied from a README.
    for (const typo of [DID.slice(0, -1), `${DID.slice(0, 20)}0${DID.slice(21)}`, `${DID}x`, 'did:key:z6MkBob...']) {
      expect(refused('recipient', typo)).toMatch(/looks like a did:key but does not decode .*check it for a typo$/);
      expect(refused('did', typo)).toMatch(/looks like a did:key but does not decode/);
      expect(refused('identifier', typo)).toMatch(/looks like a did:key but does not decode/);
    }
    expect(refused('recipient', 'bob')).toMatch(/is not an Ed25519 did:key/);
    expect(refused('recipient', 'did:jwk:e30')).toMatch(/is not a did:jwk of an Ed25519 key/);
    expect(refused('recipient', 'did:web:exa mple.com')).toMatch(/is not a did:web/);
    expect(refused('recipient', 'did:web:example.com:..')).toMatch(/is not a did:web/);
    expect(refused('recipient', 'did:example:123')).toMatch(/wmp sends to did:key, did:jwk, did:web and x509:/);
    expect(refused('identifier', 'https://user:pw@example.com')).toMatch(/is not an https:\/\/ identifier/);
    // did:web is for live messages: sealed mail needs a did:key's card.
    expect(refused('did', 'did:web:example.com')).toMatch(/is not an Ed25519 did:key/);
  });
});

describe('help', () => {
  it('lists every command of the table with its arguments, the global options and the exit codes', () => {
    const text = topHelp(table);
    expect(text).toContain('keys new');
    expect(text).toContain('keys show');
    expect(text).toContain('send <did> <text...>');
    expect(text).toContain('--home <dir>');
    for (const code of Object.values(ExitCode)) expect(text).toMatch(new RegExp(`^  ${code}\\s`, 'm'));
  });

  it('a command help shows usage, options with their kinds and limits, and examples', () => {
    const text = commandHelp(send);
    expect(text).toMatch(/^Usage: wmp send \[options\] <did> <text\.\.\.>$/m);
    expect(text).toMatch(/--relay <url>\s+relay \(repeatable\)/);
    expect(text).toMatch(/--count <n>\s+how many \(1\.\.5\)/);
    expect(text).toContain('  wmp send did:key:z6Mk... hello --relay http://127.0.0.1:8080');
  });
});
