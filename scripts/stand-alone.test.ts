// The repository stands alone: a user's clone has only what is in it, so nothing may cite a
// document that lives outside it (an internal design document, its sections, the notes and specs
// kept beside the repository). Cite docs/*.md, a decision record or a spec by name instead.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../', import.meta.url));
const self = relative(root, fileURLToPath(import.meta.url));

// The names are put together here, so that this file never holds the citations it looks for.
const DOC = ['DES', 'IGN'].join('');
const DIR = ['sha', 'red'].join('');

/** Each form such a citation takes; a match names a document the clone does not have. */
const OUTSIDE_CITATIONS: readonly RegExp[] = [
  new RegExp(`\\b${DOC}\\b`), // the document's name with a section, on a line of its own, or ending one
  new RegExp(`${DOC}\\.md`),
  new RegExp(`\\.\\./${DIR}\\b`),
  new RegExp(`\\b${DIR}/(?:${DOC}|spec|notes|vectors)\\b`),
  new RegExp(`/work/${DIR}\\b`),
  /(?<![\w./-])notes\/[\w-]+\.md/, // the machine notes kept beside the repository
  /\bnotes'? ?(?:\(?§|rule \(§)|crypto notes/, // "(notes §1.5)", "the notes' rule (§1.5)"
];

/** The lines of `text` that cite a document outside the repository, as `line: text`. */
function outsideCitations(text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line, n: i + 1 }))
    .filter(({ line }) => OUTSIDE_CITATIONS.some((re) => re.test(line)))
    .map(({ line, n }) => `${n}: ${line.trim()}`);
}

/** Tracked and untracked, not ignored, files; a copy without git is walked instead. */
function repositoryFiles(): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return out.split('\0').filter((f) => f !== '');
  } catch {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
        if (entry.name.startsWith('.') && entry.name !== '.changeset') continue;
        if (entry.name === 'node_modules' || entry.name === 'dist') continue;
        const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) files.push(path);
      }
    };
    walk('');
    return files;
  }
}

describe('the repository stands alone', () => {
  it('no file cites a document outside the repository', () => {
    const found: string[] = [];
    for (const file of repositoryFiles()) {
      if (file === self) continue;
      const path = join(root, file);
      if (!existsSync(path) || !statSync(path).isFile()) continue;
      const bytes = readFileSync(path);
      if (bytes.includes(0)) continue; // binary
      for (const hit of outsideCitations(bytes.toString('utf8'))) found.push(`${file}:${hit}`);
    }
    expect(found).toEqual([]);
  });

  it('catches each form of such a citation, and not the docs of the project', () => {
    const cited = [
      `// Bounded (${DOC} §7).`,
      ` * the box (${DOC}\n * §4.6)`,
      `see ${DOC}.md section 4`,
      `rules in ../../../../${DIR}/${DOC}.md`,
      `"spec": "${DIR}/${DOC}.md section 4"`,
      `its vectors are in ${DIR}/vectors/ohan/`,
      `read /work/${DIR}/spec/wmp-core-0.1.txt`,
      '(measured in notes/relay-anchors.md §2.1)',
      'never used again (notes §1.5)',
      "Keeping both is the notes' rule (§1.5)",
      'see the crypto notes',
    ];
    for (const text of cited) expect(outsideCitations(text), text).not.toEqual([]);
    const own = [
      '// Bounded (docs/architecture.md, "Bounds").',
      'see docs/ohan-profile.md and docs/decisions/0130-logs-hold-no-request-content.md',
      'core §5.3, transport §6.2, wmp-tables §2.4, OHAN-04',
      `import { x } from "./${DIR}/x.js"; const design = 1; // the design intent`,
      'bench/results/notes/x.md',
    ];
    for (const text of own) expect(outsideCitations(text), text).toEqual([]);
  });
});
