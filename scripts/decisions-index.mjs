// Regenerates the index of docs/decisions.md from the records in docs/decisions/ (their numbers,
// titles and `<!-- area: ... -->` lines), between the two marker comments:
//   node scripts/decisions-index.mjs          rewrites the index
//   node scripts/decisions-index.mjs --check  exits 1 when the index is out of date
// scripts/decisions-index.test.ts fails when the index is stale or two records share a number.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const START = '<!-- decisions-index:start -->';
export const END = '<!-- decisions-index:end -->';

/** The areas in index order; a record of another area comes after them, one without any last. */
export const AREAS = [
  'workspace',
  'envelope',
  'signing',
  'OHAN',
  'sessions',
  'transports',
  'relay storage',
  'coordination',
  'cluster',
  'PostgreSQL',
  'routing',
  'MLS',
  'box',
  'SDK',
  'CLI',
  'auth',
  'conformance',
  'hardening',
  'federation',
  'house',
  'throughput',
];

const UNFILED = 'unfiled';
const FILE = /^(\d{4})-[a-z0-9-]+\.md$/;
const TITLE = /^# (\d{4})\. (\S.*)$/;
const AREA = /<!-- area: ([^>]+?) -->/;

/** The records of `dir`: `{ number, title, area, file }`, by number then file name. */
export function readRecords(dir) {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md'))
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      const title = TITLE.exec(text.split('\n', 1)[0]);
      return {
        file,
        fileNumber: FILE.exec(file)?.[1],
        number: title?.[1],
        title: title?.[2].trim(),
        area: AREA.exec(text)?.[1].trim() ?? UNFILED,
      };
    })
    .sort((a, b) => (a.number ?? '').localeCompare(b.number ?? '') || a.file.localeCompare(b.file));
}

/** What is wrong with the records: bad names or titles, and numbers used twice. */
export function problems(records) {
  const found = [];
  const byNumber = new Map();
  for (const r of records) {
    if (r.fileNumber === undefined) found.push(`${r.file}: the name is not NNNN-slug.md`);
    if (r.number === undefined) found.push(`${r.file}: the first line is not "# NNNN. Title"`);
    else if (r.fileNumber !== undefined && r.number !== r.fileNumber)
      found.push(`${r.file}: the title says ${r.number}`);
    const n = r.fileNumber ?? r.number;
    if (n !== undefined) byNumber.set(n, [...(byNumber.get(n) ?? []), r.file]);
  }
  for (const [n, files] of byNumber) if (files.length > 1) found.push(`${n} is used by ${files.join(', ')}`);
  return found;
}

/** The index: one list per area, `- [NNNN](decisions/file) — title — area`. */
export function renderIndex(records) {
  const areas = [...new Set(records.map((r) => r.area))].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const parts = areas.map((area) => {
    const lines = records
      .filter((r) => r.area === area)
      .map((r) => `- [${r.number ?? r.fileNumber}](decisions/${r.file}) — ${r.title ?? r.file} — ${area}`);
    return [`### ${area}`, '', ...lines].join('\n');
  });
  return parts.join('\n\n');
}

function rank(area) {
  if (area === UNFILED) return AREAS.length + 1;
  const i = AREAS.indexOf(area);
  return i < 0 ? AREAS.length : i;
}

/** `text` with `index` between the markers; throws when they are missing. */
export function withIndex(text, index) {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/decisions.md needs the markers ${START} and ${END}`);
  return `${text.slice(0, start + START.length)}\n\n${index}\n\n${text.slice(end)}`;
}

/** The repository's index file and records directory. */
export function repositoryPaths(root) {
  return { indexFile: join(root, 'docs', 'decisions.md'), recordsDir: join(root, 'docs', 'decisions') };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { indexFile, recordsDir } = repositoryPaths(fileURLToPath(new URL('../', import.meta.url)));
  const records = readRecords(recordsDir);
  const found = problems(records);
  for (const p of found) console.error(`decisions: ${p}`);
  const text = readFileSync(indexFile, 'utf8');
  const next = withIndex(text, renderIndex(records));
  if (process.argv.includes('--check')) {
    if (next !== text) console.error('decisions: docs/decisions.md is out of date (node scripts/decisions-index.mjs)');
    process.exitCode = next !== text || found.length > 0 ? 1 : 0;
  } else {
    if (next !== text) writeFileSync(indexFile, next);
    process.exitCode = found.length > 0 ? 1 : 0;
  }
}
