import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir } from '../test-support/services/common.js';
import { END, problems, readRecords, renderIndex, repositoryPaths, START, withIndex } from './decisions-index.mjs';

const { indexFile, recordsDir } = repositoryPaths(fileURLToPath(new URL('../', import.meta.url)));

const record = (number: string, title: string, area?: string) =>
  [
    `# ${number}. ${title}`,
    '',
    '- Context: c.',
    '- Decision: d.',
    '- Consequences: x.',
    '',
    area ? `<!-- area: ${area} -->` : '',
    '',
  ].join('\n');

describe('decision records', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) removeDir(dir);
  });
  const scratch = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-decisions-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  it('docs/decisions.md lists every record as it is now (node scripts/decisions-index.mjs)', () => {
    const text = readFileSync(indexFile, 'utf8');
    expect(text).toBe(withIndex(text, renderIndex(readRecords(recordsDir))));
  });

  it('no two records share a number, and every name and title has the NNNN form', () => {
    expect(problems(readRecords(recordsDir))).toEqual([]);
  });

  it('finds a shared number, a title that disagrees with its file, and a name without a number', () => {
    const dir = scratch({
      '0007-one.md': record('0007', 'One', 'cluster'),
      '0007-two.md': record('0007', 'Two', 'cluster'),
      '0008-three.md': record('0009', 'Three', 'cluster'),
      'notes.md': 'no title\n',
    });
    expect(problems(readRecords(dir))).toEqual([
      'notes.md: the name is not NNNN-slug.md',
      'notes.md: the first line is not "# NNNN. Title"',
      '0008-three.md: the title says 0009',
      '0007 is used by 0007-one.md, 0007-two.md',
    ]);
  });

  it('sees a stale index: a record added after the index was written', () => {
    const dir = scratch({ '0001-first.md': record('0001', 'First', 'routing') });
    const text = withIndex(`# Decisions\n\n${START}\n${END}\n`, renderIndex(readRecords(dir)));
    writeFileSync(join(dir, '0002-second.md'), record('0002', 'Second', 'routing'));
    expect(withIndex(text, renderIndex(readRecords(dir)))).not.toBe(text);
  });

  it('groups by area in the fixed order, other areas after, unfiled last', () => {
    const dir = scratch({
      '0001-a.md': record('0001', 'Late area', 'throughput'),
      '0002-b.md': record('0002', 'Early area', 'workspace'),
      '0003-c.md': record('0003', 'No area'),
      '0004-d.md': record('0004', 'Odd area', 'zeta'),
    });
    expect(renderIndex(readRecords(dir))).toBe(
      [
        '### workspace',
        '',
        '- [0002](decisions/0002-b.md) — Early area — workspace',
        '',
        '### throughput',
        '',
        '- [0001](decisions/0001-a.md) — Late area — throughput',
        '',
        '### zeta',
        '',
        '- [0004](decisions/0004-d.md) — Odd area — zeta',
        '',
        '### unfiled',
        '',
        '- [0003](decisions/0003-c.md) — No area — unfiled',
      ].join('\n'),
    );
  });
});
