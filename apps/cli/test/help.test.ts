// Help and usage errors of the real command table, run in-process (no relay, no SDK calls), and
// the README, which must name every command the table has.
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { allCommands, COMMANDS, commandName, ExitCode, runCli } from '../src/index.js';

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) => {
    const s = new PassThrough();
    s.setEncoding('utf8').on('data', (d: string) => append(d));
    return s;
  };
  const out = sink((d) => (stdout += d));
  const err = sink((d) => (stderr += d));
  const code = await runCli(argv, {
    stdout: out,
    stderr: err,
    stdin: new PassThrough(),
    env: { HOME: '/nonexistent-home-for-tests' },
    signal: new AbortController().signal,
  });
  await new Promise((r) => setImmediate(r));
  return { code, stdout, stderr };
}

describe('wmp --help and <command> --help', () => {
  it('the top help lists every command of the table with its summary', async () => {
    const { code, stdout, stderr } = await run(['--help']);
    expect(code).toBe(ExitCode.ok);
    expect(stderr).toBe('');
    for (const spec of allCommands(COMMANDS)) {
      expect(stdout).toMatch(new RegExp(`^  ${commandName(spec)}\\b.*${escapeRegExp(spec.summary)}$`, 'm'));
    }
  });

  it('wmp with no command is a usage error: the same usage on stderr, nothing on stdout, exit 2', async () => {
    const { stdout: help } = await run(['--help']);
    const bare = await run([]);
    expect(bare).toEqual({ code: ExitCode.usage, stdout: '', stderr: help });
    const withHome = await run(['--home', '/tmp/x']);
    expect(withHome.code).toBe(ExitCode.usage);
    const asJson = await run(['--json']);
    expect(asJson.code).toBe(ExitCode.usage);
    expect(asJson.stdout).toBe('');
    expect(JSON.parse(asJson.stderr)).toEqual({
      error: { code: 'usage', exit: 2, message: 'no command given', hint: 'Run: wmp --help' },
    });
  });

  it('every command has a help page with its usage, and at least one example that parses', async () => {
    for (const spec of allCommands(COMMANDS)) {
      const { code, stdout } = await run([...spec.path, '--help']);
      expect(code, commandName(spec)).toBe(ExitCode.ok);
      expect(stdout).toMatch(new RegExp(`^Usage: wmp ${commandName(spec)}\\b`, 'm'));
      for (const name of Object.keys(spec.options ?? {})) expect(stdout).toContain(`--${name}`);
      expect(spec.examples?.length, commandName(spec)).toBeGreaterThan(0);
      for (const example of spec.examples ?? []) {
        expect(example.startsWith(`wmp `) || example.includes('| wmp ') || example.includes('wmp '), example).toBe(
          true,
        );
      }
    }
  });

  it('group help lists the group commands', async () => {
    const { code, stdout } = await run(['mail', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}mail send <did> <text\.\.\.>/m);
    expect(stdout).toMatch(/^ {2}mail fetch/m);
    expect(stdout).toMatch(/^ {2}mail watch/m);
  });

  it('usage errors exit 2 with what is wrong and where to look, as text or as JSON', async () => {
    const text = await run(['mail', 'sned']);
    expect(text.code).toBe(ExitCode.usage);
    expect(text.stdout).toBe('');
    expect(text.stderr).toBe('wmp: unknown command "mail sned"\nDid you mean "mail send"? Run: wmp mail --help\n');

    const json = await run(['--json', 'send', 'did:key:nope', 'hi']);
    expect(json.code).toBe(ExitCode.usage);
    const error = JSON.parse(json.stderr).error;
    expect(error).toMatchObject({ code: 'usage', exit: 2, hint: 'Run: wmp send --help' });
    expect(error.message).toMatch(/^<did>: "did:key:nope" is not an Ed25519 did:key/);

    expect((await run(['send', '--relay', 'ftp://x', 'did:key:z6Mk', 'x'])).code).toBe(ExitCode.usage);
    expect((await run(['mail', 'watch', '--count', '0'])).stderr).toMatch(/--count: "0" is not a whole number from 1/);
  });

  it('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect((await run(['--version'])).stdout).toBe(`wmp ${pkg.version}\n`);
    expect(JSON.parse((await run(['--version', '--json'])).stdout)).toEqual({ version: pkg.version });
  });

  it('the README documents every command and every exit code', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const spec of allCommands(COMMANDS)) expect(readme, commandName(spec)).toContain(`wmp ${commandName(spec)}`);
    for (const code of Object.values(ExitCode)) expect(readme).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
