// The small pieces under the commands, in-process: output modes and the progress line, the REPL's
// word splitting and bounded history, and the escaping of received text.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { printable } from '../src/commands/common.js';
import { CliError, NotFoundError } from '../src/errors.js';
import { Output } from '../src/output.js';
import { NO_PROGRESS } from '../src/progress.js';
import { loadHistory, saveHistory } from '../src/repl/history.js';
import { splitWords } from '../src/repl/words.js';

function sinks(tty: boolean) {
  const text = { out: '', err: '' };
  return {
    text,
    io: {
      stdout: { write: (s: string) => (text.out += s) },
      stderr: { write: (s: string) => (text.err += s), isTTY: tty, columns: 40 },
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'wmp-cli-units-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Output', () => {
  it('people get text and notes; --json gets one JSON line per value and JSON errors, no notes', () => {
    const human = sinks(false);
    const out = new Output(human.io, { json: false });
    out.result({ a: 1 }, () => ['line one', 'line two']);
    out.note('working');
    out.error(new NotFoundError('no card', 'Publish one'));
    expect(human.text).toEqual({ out: 'line one\nline two\n', err: 'working\nwmp: no card\nPublish one\n' });

    const machine = sinks(false);
    const json = new Output(machine.io, { json: true });
    json.result({ a: 1 }, () => 'ignored');
    json.item({ b: 2 }, () => 'ignored');
    json.note('not shown');
    json.warn('careful', 'some_code');
    json.error(new CliError('failed', 'Try again', { box_code: 'x' }));
    expect(machine.text.out).toBe('{"a":1}\n{"b":2}\n');
    expect(
      machine.text.err
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { warning: { code: 'some_code', message: 'careful' } },
      { error: { code: 'failed', exit: 1, message: 'failed', hint: 'Try again', details: { box_code: 'x' } } },
    ]);
  });

  it('draws a progress line only on a terminal and not with --json, and erases it when done', () => {
    expect(new Output(sinks(false).io, { json: false }).progress('x')).toBe(NO_PROGRESS);
    expect(new Output(sinks(true).io, { json: true }).progress('x')).toBe(NO_PROGRESS);
    const tty = sinks(true);
    const progress = new Output(tty.io, { json: false }).progress('mining a proof-of-work stamp that is long');
    progress.update('(50%)');
    progress.done();
    progress.done();
    expect(tty.text.err.startsWith('\r\x1b[K| mining a proof-of-work stamp')).toBe(true);
    // Cut to the terminal width, erased at the end, nothing on stdout.
    for (const line of tty.text.err.split('\r\x1b[K')) expect(line.length).toBeLessThanOrEqual(39);
    expect(tty.text.err.endsWith('\r\x1b[K')).toBe(true);
    expect(tty.text.out).toBe('');
  });
});

describe('the REPL pieces', () => {
  it('splits words like a small shell', () => {
    expect(splitWords(`send did:key:z6Mk "hello  there" it\\'s 'a "b"'`)).toEqual([
      'send',
      'did:key:z6Mk',
      'hello  there',
      "it's",
      'a "b"',
    ]);
    expect(splitWords('  ')).toEqual([]);
    expect(() => splitWords('say "open')).toThrow(/unclosed " quote/);
  });

  it('keeps a bounded history, oldest first in the file, mode 0600', async () => {
    const file = join(dir, 'history');
    expect(await loadHistory(file)).toEqual([]);
    const newestFirst = Array.from({ length: 600 }, (_, i) => `cmd ${599 - i}`);
    await saveHistory(file, newestFirst);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.length).toBe(500);
    expect(lines[0]).toBe('cmd 100');
    expect(lines[499]).toBe('cmd 599');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await loadHistory(file, 3)).slice(0, 3)).toEqual(['cmd 599', 'cmd 598', 'cmd 597']);
    writeFileSync(file, `${'x'.repeat(5000)}\nok\n`);
    expect(await loadHistory(file)).toEqual(['ok']);
  });
});

describe('printable', () => {
  it('escapes terminal control characters, keeps text, tabs and newlines', () => {
    expect(printable('hi\x1b[2J\x07 there\t\nü')).toBe('hi\\u001b[2J\\u0007 there\t\nü');
    expect(printable('\u009b31m')).toBe('\\u009b31m');
  });
});
